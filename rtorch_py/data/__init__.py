"""Datasets, samplers and data loaders with R torch's names (0-based indices
in Python; the R side, `r_compat/R/data*.R`, is 1-based as in R torch)."""
from __future__ import annotations

import warnings
from typing import Any, Callable, Iterator

import numpy as np

from ..constructors import torch_randint, torch_randperm, torch_tensor
from ..ops.registry import REGISTRY
from ..tensor import Tensor, wrap

torch_stack = REGISTRY["stack"].fn  # (the public op: the package's torch_stack)

__all__ = [
    "Dataset", "IterableDataset", "dataset", "iterable_dataset", "tensor_dataset",
    "dataset_subset", "Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
    "BatchSampler", "DataLoader", "dataloader", "dataloader_make_iter", "dataloader_next",
    "default_collate", "is_dataloader",
]


def _randperm(n: int) -> np.ndarray:
    # torch_randperm(n) from the default generator, as R torch's RandomSampler
    # draws it: the same seed gives R torch's order
    return torch_randperm(n).data


class Dataset:
    """Map-style dataset: `__getitem__(i)` (0-based) and `__len__()`; an
    optional `getbatch(indices)` returns a whole batch at once."""

    def __getitem__(self, index: Any) -> Any:
        raise NotImplementedError("a dataset must define __getitem__ (or getitem)")

    def __len__(self) -> int:
        raise NotImplementedError("a dataset must define __len__ (or length)")


class IterableDataset:
    """Iterable-style dataset: `__iter__()` yields examples."""

    def __iter__(self) -> Iterator:
        raise NotImplementedError("an iterable dataset must define __iter__")


_METHOD_NAMES = {".getitem": "__getitem__", "getitem": "__getitem__", ".length": "__len__",
                 "length": "__len__", ".getbatch": "getbatch", ".iter": "__iter__",
                 "iter": "__iter__"}


def _make_class(name: str | None, base: type, methods: dict) -> type:
    body = {_METHOD_NAMES.get(k, k): v for k, v in methods.items()}
    if "initialize" in body:
        body["__init__"] = body.pop("initialize")
    if "__len__" in body:
        length = body["__len__"]
        body["__len__"] = lambda self: int(length(self))
    return type(name or base.__name__, (base,), body)


def dataset(name: str | None = None, inherit: type = Dataset, **methods: Any) -> type:
    """A dataset class from functions taking `self`, as R torch's dataset():
    `dataset("name", initialize=..., getitem=..., length=...)`."""
    return _make_class(name, inherit, methods)


def iterable_dataset(name: str | None = None, inherit: type = IterableDataset,
                     **methods: Any) -> type:
    return _make_class(name, inherit, methods)


class TensorDataset(Dataset):
    """Rows of tensors of the same first size; items are lists (or dicts, when
    the tensors were named)."""

    def __init__(self, *tensors: Tensor, **named: Tensor) -> None:
        if tensors and named:
            raise ValueError("tensor_dataset() takes tensors either all named or all unnamed")
        self.names = list(named) or None
        self.tensors = list(named.values()) if named else list(tensors)
        if not self.tensors:
            raise ValueError("tensor_dataset() needs at least one tensor")
        sizes = {t.shape[0] for t in self.tensors}
        if len(sizes) != 1:
            raise ValueError(f"all tensors must have the same size in the first dimension, "
                             f"got {sorted(sizes)}")

    def _pack(self, values: list) -> Any:
        return dict(zip(self.names, values)) if self.names else values

    def __getitem__(self, index: Any) -> Any:
        return self._pack([t[index] for t in self.tensors])

    def getbatch(self, indices: Any) -> Any:
        return self._pack(take_rows(self.tensors, np.asarray(indices, dtype=np.int64)))

    def __len__(self) -> int:
        return self.tensors[0].shape[0]


def take_rows(tensors: list, idx: np.ndarray) -> list:
    """`t[idx]` of each tensor, idx a 1-d int64 array. Fast path: a plain tensor
    with no graph or dim names to carry gets index()'s own np.take without the
    op's dispatch (every batch of a tensor dataset is read so); an index out of
    range gets the op's error."""
    key = None
    out = []
    for t in tensors:
        d = t.data
        if type(d) is np.ndarray and d.ndim and not t._rg and t._names is None:
            try:
                out.append(wrap(np.take(d, idx, axis=0)))
                continue
            except IndexError:
                pass
        key = torch_tensor(idx) if key is None else key
        out.append(t[key])
    return out


def tensor_dataset(*tensors: Tensor, **named: Tensor) -> TensorDataset:
    return TensorDataset(*tensors, **named)


class Subset(Dataset):
    def __init__(self, data: Any, indices: Any) -> None:
        self.dataset = data
        self.indices = [int(i) for i in indices]

    def __getitem__(self, index: int) -> Any:
        return self.dataset[self.indices[index]]

    def __len__(self) -> int:
        return len(self.indices)

    def getbatch(self, indices: Any) -> Any:
        mapped = [self.indices[i] for i in indices]
        if hasattr(self.dataset, "getbatch"):
            return self.dataset.getbatch(mapped)
        return default_collate([self.dataset[i] for i in mapped])


def dataset_subset(data: Any, indices: Any) -> Subset:
    return Subset(data, indices)


# -- samplers ------------------------------------------------------------------

class Sampler:
    def __iter__(self) -> Iterator:
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError


class SequentialSampler(Sampler):
    def __init__(self, data_source: Any) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    def __init__(self, data_source: Any, replacement: bool = False,
                 num_samples: int | None = None) -> None:
        self.data_source, self.replacement = data_source, replacement
        self._num_samples = num_samples
        if num_samples is not None and num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer, got {num_samples}")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else int(self._num_samples)

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        if self.replacement:
            return iter(torch_randint(0, n, size=(self.num_samples,)).data.tolist())
        out: list = []
        while len(out) < self.num_samples:
            out.extend(_randperm(n).tolist())
        return iter(out[:self.num_samples])

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    def __init__(self, indices: Any) -> None:
        self.indices = list(indices)

    def __iter__(self) -> Iterator[int]:
        return iter(self.indices[i] for i in _randperm(len(self.indices)))

    def __len__(self) -> int:
        return len(self.indices)


class BatchSampler(Sampler):
    def __init__(self, sampler: Any, batch_size: int, drop_last: bool) -> None:
        if int(batch_size) <= 0:
            raise ValueError(f"batch_size should be a positive integer, got {batch_size}")
        self.sampler, self.batch_size, self.drop_last = sampler, int(batch_size), drop_last

    def __iter__(self) -> Iterator[list]:
        batch: list = []
        for i in self.sampler:
            batch.append(i)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


# -- collation and the loader -----------------------------------------------------

def default_collate(batch: list) -> Any:
    """Stack a list of examples into a batch: tensors stacked on a new first
    dim, numbers into a tensor, lists and dicts element by element."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        return torch_stack(batch, 0)
    if isinstance(elem, np.ndarray):
        return torch_stack([torch_tensor(b) for b in batch], 0)
    if isinstance(elem, (bool, np.bool_)):
        return torch_tensor(np.array(batch, dtype=np.bool_))
    if isinstance(elem, (int, np.integer)):
        return torch_tensor(np.array(batch, dtype=np.int64))
    if isinstance(elem, (float, np.floating)):
        return torch_tensor(np.array(batch, dtype=np.float32))
    if isinstance(elem, str):
        return list(batch)
    if isinstance(elem, dict):
        return {k: default_collate([b[k] for b in batch]) for k in elem}
    if isinstance(elem, (list, tuple)):
        if any(len(b) != len(elem) for b in batch):
            raise ValueError("each element in the batch should be of equal size")
        return [default_collate(list(col)) for col in zip(*batch)]
    raise TypeError(f"can't collate a batch of {type(elem).__name__}; give a collate_fn")


class DataLoader:
    def __init__(self, dataset: Any, batch_size: int | None = 1, shuffle: bool = False,
                 sampler: Any = None, batch_sampler: Any = None, num_workers: int = 0,
                 collate_fn: Callable | None = None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0, worker_init_fn: Any = None,
                 **unused: Any) -> None:
        # PyTorch's worker settings have no effect here (no worker processes)
        unknown = set(unused) - {"generator", "prefetch_factor", "persistent_workers",
                                 "worker_globals", "worker_packages", "multiprocessing_context"}
        if unknown:
            raise TypeError(f"dataloader() got unexpected argument(s): {', '.join(sorted(unknown))}")
        if num_workers and num_workers > 0:
            # no worker processes here: the same batches, loaded in this process
            warnings.warn(f"num_workers = {num_workers} is ignored: rtorch-py loads batches in "
                          "this process (no worker processes); results are the same",
                          stacklevel=3)
        self.dataset, self.batch_size, self.drop_last = dataset, batch_size, drop_last
        self.collate_fn = collate_fn or default_collate
        self.iterable = isinstance(dataset, IterableDataset)
        if self.iterable:
            if shuffle or sampler is not None or batch_sampler is not None:
                raise ValueError("an iterable dataset can't be shuffled or sampled")
            self.batch_sampler = None
            return
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            self.batch_size = None
        else:
            if sampler is not None and shuffle:
                raise ValueError("sampler option is mutually exclusive with shuffle")
            if sampler is None:
                sampler = RandomSampler(dataset) if shuffle else SequentialSampler(dataset)
            if batch_size is not None:
                batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.sampler = sampler
        self.batch_sampler = batch_sampler

    def __len__(self) -> int:
        if self.iterable:
            n = len(self.dataset)
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        return len(self.sampler)

    def _fetch(self, indices: list) -> Any:
        getbatch = getattr(self.dataset, "getbatch", None)
        if getbatch is not None:
            return getbatch(indices)
        return self.collate_fn([self.dataset[i] for i in indices])

    def __iter__(self) -> Iterator:
        if self.iterable:
            return self._iter_iterable()
        if self.batch_sampler is None:  # batch_size = None: one example at a time
            return (self.dataset[i] for i in self.sampler)
        return (self._fetch(list(b)) for b in self.batch_sampler)

    def _iter_iterable(self) -> Iterator:
        batch: list = []
        for item in self.dataset:
            batch.append(item)
            if len(batch) == self.batch_size:
                yield self.collate_fn(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.collate_fn(batch)


def dataloader(dataset: Any, batch_size: int | None = 1, shuffle: bool = False,
               sampler: Any = None, batch_sampler: Any = None, num_workers: int = 0,
               collate_fn: Callable | None = None, pin_memory: bool = False,
               drop_last: bool = False, **kwargs: Any) -> DataLoader:
    return DataLoader(dataset, batch_size, shuffle, sampler, batch_sampler, num_workers,
                      collate_fn, pin_memory, drop_last, **kwargs)


def is_dataloader(x: Any) -> bool:
    return isinstance(x, DataLoader)


def dataloader_make_iter(dl: DataLoader) -> Iterator:
    return iter(dl)


def dataloader_next(it: Iterator, completed: Any = None) -> Any:
    """The next batch, or `completed` when the loader is exhausted."""
    return next(it, completed)
