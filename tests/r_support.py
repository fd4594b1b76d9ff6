"""R functions for the R tests only, loaded into the shim through
RTORCH_PY_R_EXTENSIONS (tests/helpers.py sets it for every R run)."""
from __future__ import annotations

import gc
from typing import Callable


def live_objects(type_name: str = "Tensor", min_bytes: float = 0) -> int:
    """How many Python objects of a type exist (tensors: holding at least
    `min_bytes`): lets tests check that R's garbage collector releases what R
    no longer uses."""
    gc.collect()
    return sum(1 for o in gc.get_objects() if type(o).__name__ == type_name and
               (not min_bytes or o.data.nbytes >= min_bytes))


R_FUNCTIONS: dict[str, Callable] = {"rtorch_live_objects": live_objects}
