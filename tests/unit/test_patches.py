"""``_seams/patches``: the one registry through which every seam patches and puts back.

Each test uses a registry of its own (``Patches()``) on classes and modules of its
own, so nothing the running suite's seams hold is touched; the module-level
``PATCHES`` is the same class.
"""

from __future__ import annotations

import asyncio
import gc
import sys
import threading
import time
import unittest
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any, ClassVar

import pytest

from tests.support.helpers.env import temp_dir
from vcr_kit._seams.patches import PATCHES, Patch, Patches, patch

pytestmark = pytest.mark.inprocess


def tagged(found: Any, tag: str = "wrapped") -> Any:
    """A replacement that says what it replaced."""

    def replacement(*args: Any) -> Any:
        return (tag, found, args)

    replacement.wrapped = found  # type: ignore[attr-defined]
    return replacement


def noop() -> None:
    pass


class Logged(type):
    """A metaclass that logs every attribute set on or deleted from its classes."""

    log: ClassVar[list[tuple[str, str]]] = []
    values: ClassVar[list[Any]] = []

    def __setattr__(cls, name: str, value: Any) -> None:
        Logged.log.append(("set", name))
        Logged.values.append(value)
        super().__setattr__(name, value)

    def __delattr__(cls, name: str) -> None:
        Logged.log.append(("del", name))
        Logged.values.append(None)
        super().__delattr__(name)


def fresh_classes() -> tuple[type[Any], type[Any]]:
    class Base:
        def inherited(self) -> str:
            return "base"

    class Target(Base):
        def own(self) -> str:
            return "own"

        def other(self) -> str:
            return "other"

    return Base, Target


class EnterAndLeaveTest(unittest.TestCase):
    def setUp(self) -> None:
        self.patches = Patches()
        self.Base, self.Target = fresh_classes()
        self.own = self.Target.__dict__["own"]

    def group(self) -> tuple[Patch, ...]:
        return (
            patch(self.Target, "own", tagged),
            patch(self.Target, "inherited", tagged, "inherited"),
        )

    def test_a_group_is_applied_and_put_back_together(self) -> None:
        with self.patches.entered("g", "user", lambda: self.patches.apply("g", self.group())):
            self.assertEqual(self.Target().own()[:2], ("wrapped", self.own))
            self.assertEqual(self.Target().inherited()[0], "inherited")
            self.assertTrue(self.patches.holds("g"))
            self.assertTrue(self.patches.is_patched(self.Target, "own"))
        self.assertIs(self.Target.__dict__["own"], self.own)
        # Inherited before: the class's own attribute is removed, not set to the base's.
        self.assertNotIn("inherited", self.Target.__dict__)
        self.assertEqual(self.Target().inherited(), "base")
        self.assertFalse(self.patches.holds("g"))
        self.assertFalse(self.patches.is_patched(self.Target, "own"))

    def test_the_replacement_is_made_from_the_attribute_as_found_and_the_args(self) -> None:
        made: list[tuple[Any, ...]] = []

        def make(found: Any, *args: Any) -> Any:
            made.append((found, *args))
            return tagged(found)

        self.patches.apply("g", [patch(self.Target, "inherited", make, 1, "two")])
        self.assertEqual(made, [(self.Base.__dict__["inherited"], 1, "two")])
        self.assertIsNone(self.patches.saved(self.Target, "inherited"))  # it had none of its own

    def test_saved_is_the_own_attribute_until_put_back(self) -> None:
        self.assertIsNone(self.patches.saved(self.Target, "own"))
        with self.patches.entered("g", 1, lambda: self.patches.apply("g", self.group())):
            self.assertIs(self.patches.saved(self.Target, "own"), self.own)
        self.assertIsNone(self.patches.saved(self.Target, "own"))

    def test_an_attribute_is_patched_once_whatever_the_group(self) -> None:
        self.patches.apply("g", [patch(self.Target, "own", tagged)])
        first = self.Target.__dict__["own"]
        self.patches.apply("g", [patch(self.Target, "own", tagged)])
        self.patches.apply("h", [patch(self.Target, "own", tagged, "again")])
        self.assertIs(self.Target.__dict__["own"], first)  # never a wrapper of a wrapper
        self.assertFalse(self.patches.holds("h"))

    def test_once_applies_nothing_to_a_group_that_holds_patches(self) -> None:
        self.patches.apply("g", [patch(self.Target, "own", tagged)], once=True)
        self.patches.apply("g", [patch(self.Target, "other", tagged)], once=True)
        self.assertIs(self.Target.__dict__["other"], self.Target.other)
        self.assertFalse(self.patches.is_patched(self.Target, "other"))

    def test_entering_again_installs_the_same_wrappers(self) -> None:
        seen = []
        for _ in range(2):
            with self.patches.entered("g", 1, lambda: self.patches.apply("g", self.group())):
                seen.append(self.Target.__dict__["own"])
        self.assertIs(seen[0], seen[1])

    def test_a_failing_install_leaves_nothing_behind(self) -> None:
        def install() -> None:
            self.patches.apply("g", self.group())
            raise RuntimeError("half-way")

        with self.assertRaises(RuntimeError), self.patches.entered("g", "user", install):
            pass  # pragma: no cover - never entered
        self.assertIs(self.Target.__dict__["own"], self.own)
        self.assertIsNone(self.patches.last("g"))


class NestingTest(unittest.TestCase):
    def setUp(self) -> None:
        self.patches = Patches()
        _, self.Target = fresh_classes()
        self.own = self.Target.__dict__["own"]
        self.installs: list[str] = []

    def install(self) -> None:
        self.installs.append("install")
        self.patches.apply("g", [patch(self.Target, "own", tagged)])

    def test_the_last_user_to_leave_puts_back_and_the_last_entered_is_current(self) -> None:
        self.assertIsNone(self.patches.last("g"))
        with self.patches.entered("g", "outer", self.install):
            with self.patches.entered("g", "inner", self.install):
                self.assertEqual(self.patches.last("g"), "inner")
            self.assertEqual(self.patches.last("g"), "outer")
            self.assertIsNot(self.Target.__dict__["own"], self.own)  # still patched
        self.assertIs(self.Target.__dict__["own"], self.own)
        self.assertIsNone(self.patches.last("g"))

    def test_install_runs_on_every_entry_or_on_the_first_only(self) -> None:
        with self.patches.entered("g", 1, self.install), self.patches.entered("g", 2, self.install):
            pass
        self.assertEqual(self.installs, ["install", "install"])
        self.installs.clear()
        with self.patches.entered("g", 1, self.install, each_entry=False):
            with self.patches.entered("g", 2, self.install, each_entry=False):
                pass
        self.assertEqual(self.installs, ["install"])

    def test_users_leave_in_any_order(self) -> None:
        outer = self.patches.entered("g", "outer", self.install)
        inner = self.patches.entered("g", "inner", self.install)
        outer.__enter__()
        inner.__enter__()
        outer.__exit__(None, None, None)  # a thread's test may end before another's
        self.assertEqual(self.patches.last("g"), "inner")
        self.assertIsNot(self.Target.__dict__["own"], self.own)
        inner.__exit__(None, None, None)
        self.assertIs(self.Target.__dict__["own"], self.own)

    def test_groups_are_put_back_apart(self) -> None:
        other = self.Target.__dict__["other"]

        def install_other() -> None:
            self.patches.apply("h", [patch(self.Target, "other", tagged)])

        with self.patches.entered("g", 1, self.install):
            with self.patches.entered("h", 1, install_other):
                self.assertIsNot(self.Target.__dict__["other"], other)
            self.assertIs(self.Target.__dict__["other"], other)
            self.assertIsNot(self.Target.__dict__["own"], self.own)


class OrderTest(unittest.TestCase):
    def test_patches_are_put_back_newest_first(self) -> None:
        patches = Patches()

        class Target(metaclass=Logged):
            def a(self) -> None: ...

            def b(self) -> None: ...

        def install() -> None:
            patches.apply("g", [patch(Target, "a", tagged), patch(Target, "b", tagged)])
            patches.apply("g", [patch(Target, "c", tagged)])

        Target.c = noop
        Logged.log.clear()
        with patches.entered("g", 1, install):
            self.assertEqual(Logged.log, [("set", "a"), ("set", "b"), ("set", "c")])
        self.assertEqual(Logged.log[3:], [("set", "c"), ("set", "b"), ("set", "a")])


class Slow(Logged):
    """Setting takes a while (and lets other threads run): a check made apart from its
    patch would let another thread in between."""

    def __setattr__(cls, name: str, value: Any) -> None:
        time.sleep(0.0002)
        super().__setattr__(name, value)


class ThreadsTest(unittest.TestCase):
    def test_threads_entering_together_patch_once_and_put_back_once(self) -> None:
        patches = Patches()

        class Target(metaclass=Slow):
            def own(self) -> None: ...

        original = Target.__dict__["own"]
        wrong: list[str] = []

        def install() -> None:
            patches.apply("g", [patch(Target, "own", tagged)])

        def run(worker: int) -> None:
            barrier.wait()
            for round_ in range(40):
                with patches.entered("g", (worker, round_), install):
                    own = Target.__dict__["own"]
                    if getattr(own, "wrapped", None) is not original:
                        wrong.append(f"{worker}/{round_}: {own!r}")

        barrier = threading.Barrier(8)
        Logged.log.clear()
        Logged.values.clear()
        threads = [threading.Thread(target=run, args=(n,)) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.assertEqual(wrong, [])
        self.assertIs(Target.__dict__["own"], original)
        # Patched and put back in turns: never patched twice, never put back twice.
        kinds = ["original" if v is original else "wrapper" for v in Logged.values]
        self.assertGreater(len(kinds), 0)
        self.assertEqual(kinds, ["wrapper", "original"] * (len(kinds) // 2))
        self.assertIsNone(patches.last("g"))

    def test_threads_that_race_make_one_object(self) -> None:
        patches = Patches()
        barrier = threading.Barrier(8)
        got: list[object] = []

        def make(tag: str) -> object:
            return object()

        def race() -> None:
            barrier.wait()
            got.append(patches.made_once(make, "raced"))

        threads = [threading.Thread(target=race) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.assertEqual(len({id(made) for made in got}), 1)


@contextmanager
def importable(test: unittest.TestCase, *names: str) -> Iterator[None]:
    """Modules ``names`` (each sets ``VALUE = 1``) importable from a temporary folder."""
    folder = temp_dir(test)
    for name in names:
        (folder / f"{name}.py").write_text("VALUE = 1\n", encoding="utf-8")
    sys.path.insert(0, str(folder))
    try:
        yield
    finally:
        sys.path.remove(str(folder))
        for name in names:
            sys.modules.pop(name, None)


def wrapper_of(function: Callable[[], int], label: str) -> Callable[[], str]:
    return lambda: f"{label}: {function()}"


def other_wrapper_of(function: Callable[[], int], label: str) -> Callable[[], str]:
    return wrapper_of(function, label)


def one() -> int:
    return 1


def two() -> int:
    return 2


class MadeOnceTest(unittest.TestCase):
    """``made_once``: the seams' wrappers are made once per what they wrap (the race of
    threads making one: ``ThreadsTest``)."""

    def test_the_same_arguments_give_the_same_object(self) -> None:
        made_once = Patches().made_once
        first = made_once(wrapper_of, one, "a")
        self.assertIs(made_once(wrapper_of, one, "a"), first)
        self.assertEqual(first(), "a: 1")

    def test_other_arguments_or_another_maker_give_another(self) -> None:
        made_once = Patches().made_once
        made = made_once(wrapper_of, one, "b")
        self.assertIsNot(made_once(wrapper_of, two, "b"), made)
        self.assertIsNot(made_once(wrapper_of, one, "c"), made)
        self.assertIsNot(made_once(other_wrapper_of, one, "b"), made)
        self.assertEqual(made_once(wrapper_of, two, "b")(), "b: 2")


class WhenImportedTest(unittest.TestCase):
    def setUp(self) -> None:
        self.patches = Patches()
        self.patched: list[str] = []

    def patch_module(self, module: ModuleType) -> None:
        self.patched.append(module.__name__)
        self.patches.apply("g", [patch(module, "VALUE", lambda found: found + 1)])

    def install(self, name: str) -> Callable[[], None]:
        return lambda: self.patches.when_imported("g", name, self.patch_module)

    def hooks(self) -> list[Any]:
        return [f for f in sys.meta_path if type(f).__name__ == "PatchOnImport"]

    def test_a_module_loaded_already_is_patched_at_once(self) -> None:
        before = self.hooks()
        with importable(self, "vcr_probe_loaded"):
            import vcr_probe_loaded  # type: ignore[import-not-found]

            with self.patches.entered("g", 1, self.install("vcr_probe_loaded")):
                self.assertEqual((vcr_probe_loaded.VALUE, self.hooks()), (2, before))
            self.assertEqual((vcr_probe_loaded.VALUE, self.patched), (1, ["vcr_probe_loaded"]))

    def test_a_module_imported_during_the_entry_is_patched_and_put_back(self) -> None:
        before = self.hooks()
        with importable(self, "vcr_probe_imported"):
            with self.patches.entered("g", 1, self.install("vcr_probe_imported")):
                self.assertEqual(len(self.hooks()), len(before) + 1)
                self.assertNotIn("vcr_probe_imported", sys.modules)  # hooked, not imported
                import vcr_probe_imported  # type: ignore[import-not-found]

                self.assertEqual(vcr_probe_imported.VALUE, 2)
                self.assertEqual(self.patched, ["vcr_probe_imported"])
            self.assertEqual(vcr_probe_imported.VALUE, 1)
            self.assertEqual(self.hooks(), before)

    def test_one_hook_per_module_however_often_entered(self) -> None:
        before = len(self.hooks())
        with importable(self, "vcr_probe_twice"):
            with self.patches.entered("g", 1, self.install("vcr_probe_twice")):
                with self.patches.entered("g", 2, self.install("vcr_probe_twice")):
                    self.assertEqual(len(self.hooks()), before + 1)
                    import vcr_probe_twice  # type: ignore[import-not-found]  # noqa: F401
            self.assertEqual(self.patched, ["vcr_probe_twice"])
            self.assertEqual(len(self.hooks()), before)

    def test_a_module_imported_after_the_last_user_left_is_left_alone(self) -> None:
        with importable(self, "vcr_probe_late"):
            with self.patches.entered("g", 1, self.install("vcr_probe_late")):
                pass
            import vcr_probe_late  # type: ignore[import-not-found]

            self.assertEqual((vcr_probe_late.VALUE, self.patched), (1, []))


class ResetTest(unittest.TestCase):
    def test_reset_puts_everything_back_and_forgets_everything(self) -> None:
        patches = Patches()
        _, Target = fresh_classes()
        own = Target.__dict__["own"]
        hooks_before = list(sys.meta_path)

        def install() -> None:
            patches.apply("g", [patch(Target, "own", tagged)])
            patches.when_imported("g", "vcr_probe_never_imported", noop_patch)

        entry = patches.entered("g", "user", install)
        entry.__enter__()
        patches.apply("forever", [patch(Target, "inherited", tagged)], once=True)
        wrapper = Target.__dict__["own"]
        patches.reset()
        self.assertIs(Target.__dict__["own"], own)
        self.assertNotIn("inherited", Target.__dict__)
        self.assertEqual(sys.meta_path, hooks_before)
        self.assertIsNone(patches.last("g"))
        self.assertFalse(patches.holds("forever"))
        patches.apply("g", [patch(Target, "own", tagged)])
        self.assertIsNot(Target.__dict__["own"], wrapper)  # made again
        patches.reset()
        entry.__exit__(None, None, None)  # a user that leaves after the reset: nothing to do
        self.assertIs(Target.__dict__["own"], own)

    def test_the_process_registry_is_one_of_them(self) -> None:
        self.assertIsInstance(PATCHES, Patches)


def noop_patch(module: ModuleType) -> None:  # pragma: no cover - the module is never imported
    pass


class HoldTest(unittest.TestCase):
    def test_a_task_is_held_until_done(self) -> None:
        patches = Patches()

        async def scenario() -> None:
            gate = asyncio.Event()

            async def wait() -> None:
                await gate.wait()

            patches.hold(asyncio.get_running_loop().create_task(wait()))
            gc.collect()
            self.assertEqual(len(patches._held), 1)
            gate.set()
            await asyncio.sleep(0)
            await asyncio.sleep(0)
            self.assertEqual(patches._held, set())

        asyncio.run(scenario())


if __name__ == "__main__":
    unittest.main()
