"""The ledger: what happened (journal, run records, the run summary) and what it
cost (session cost, prices)."""
