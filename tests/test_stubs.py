"""The Tensor methods' type stub (rtorch_py/tensor_methods.pyi) is what the package
attaches: regenerated, it is the committed file, and it declares every method."""
import ast
import inspect

import rtorch_py as rt
from rtorch_py.tools import stubs


def test_stub_is_current():
    assert stubs.STUB.read_text() == stubs.current(), (
        "rtorch_py/tensor_methods.pyi is stale: run `python -m rtorch_py.tools.stubs`")


def test_stub_declares_every_attached_method_with_its_parameters():
    tree = ast.parse(stubs.STUB.read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "TensorMethods")
    declared = {f.name: f for f in cls.body if isinstance(f, ast.FunctionDef)}
    assert set(declared) == set(rt.TENSOR_METHODS)
    for name, fn in rt.TENSOR_METHODS.items():
        if isinstance(fn, property):
            assert any(isinstance(d, ast.Name) and d.id == "property"
                       for d in declared[name].decorator_list), name
            continue
        a = declared[name].args
        stub_params = [p.arg for p in a.posonlyargs + a.args][1:] + \
            ([a.vararg.arg] if a.vararg else []) + [p.arg for p in a.kwonlyargs] + \
            ([a.kwarg.arg] if a.kwarg else [])
        assert stub_params == list(inspect.signature(fn).parameters)[1:], name


def test_tensor_annotations_survive_and_unknown_types_read_as_any():
    text = stubs.STUB.read_text()
    assert "def reshape_as(self, other: Tensor) -> Tensor: ..." in text
    def f(self, g: "SomethingPrivate", n: int = 3) -> "tuple[Tensor, Tensor]": ...
    assert stubs._method("f", f) == [
        "    def f(self, g: Any, n: builtins.int = ...) -> builtins.tuple[Tensor, Tensor]: ..."]


def test_the_stub_costs_nothing_at_run_time():
    assert rt.Tensor.__mro__ == (rt.Tensor, object)
