"""The engine: replay-or-record policy with single flight, miss messages, the
codecs between live answers and fixtures, the HTTP recorder and the cassettes."""
