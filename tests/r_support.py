"""R functions for the R tests only, loaded into the shim through
RTORCH_PY_R_EXTENSIONS (tests/helpers.py sets it for every R run)."""
from __future__ import annotations

import gc
from typing import Callable


def live_objects(type_name: str = "Tensor") -> int:
    """How many Python objects of a type exist: lets tests check that R's
    garbage collector releases what R no longer uses."""
    gc.collect()
    return sum(1 for o in gc.get_objects() if type(o).__name__ == type_name)


R_FUNCTIONS: dict[str, Callable] = {"rtorch_live_objects": live_objects}
