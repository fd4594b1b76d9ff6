"""torch_save / torch_load: round trips, PyTorch's own files, and refusal of
anything that would run code."""
from __future__ import annotations

import collections
import io
import os
import pickle
import subprocess
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

import rtorch_py as rt
from rtorch_py import optim as ro
from rtorch_py.serialization import (load_state_dict, r_file, read_r_file, torch_load, torch_save,
                                     torch_serialize)


def test_round_trip_of_tensors_and_containers(tmp_path):
    x = rt.torch_randn(3, 4, requires_grad=True)
    shared = rt.torch_tensor(np.arange(5, dtype=np.int64))
    value = {"x": x, "items": [shared, shared, 1.5, float("inf"), None, "text", True, 7],
             "pair": (rt.torch_tensor([True, False]), rt.torch_tensor(np.array(2.0))),
             3: np.arange(3.0)}
    torch_save(value, tmp_path / "v.pt")
    got = torch_load(tmp_path / "v.pt")
    np.testing.assert_array_equal(got["x"].data, x.data)
    assert got["x"].requires_grad and got["x"].dtype == rt.torch_float32()
    a, b = got["items"][0], got["items"][1]
    assert a is b and a.dtype == rt.torch_int64()       # shared tensors stay shared
    assert got["items"][2:] == [1.5, float("inf"), None, "text", True, 7]
    assert isinstance(got["pair"], tuple) and got["pair"][0].dtype == rt.torch_bool()
    assert got["pair"][1].shape == ()  # 0-d stays 0-d
    np.testing.assert_array_equal(got[3], np.arange(3.0))


def test_serialize_to_bytes_and_optimizer_state(tmp_path):
    p = rt.torch_tensor([1.0, 2.0], requires_grad=True)
    opt = ro.optim_adam([p], lr=0.1)
    p.grad = rt.torch_tensor([0.5, -0.5])
    opt.step()
    loaded = torch_load(torch_serialize(opt))
    assert loaded["param_groups"][0]["lr"] == 0.1
    assert loaded["state"][0]["step"] == 1.0
    np.testing.assert_array_equal(loaded["state"][0]["exp_avg"].data,
                                  opt.state[p]["exp_avg"].data)
    q = rt.torch_tensor([1.0, 2.0], requires_grad=True)
    opt2 = ro.optim_adam([q])
    opt2.load_state_dict(loaded)
    assert opt2.param_groups[0]["lr"] == 0.1


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.int32,
                                   torch.bool, torch.float16])
def test_reads_pytorch_state_dicts(tmp_path, dtype):
    lin = torch.nn.Linear(4, 3)
    sd = lin.state_dict()
    sd["extra"] = (torch.arange(12).reshape(3, 4) > 5).to(dtype)
    sd["view"] = torch.arange(20.0).reshape(4, 5)[1:, ::2]  # offset and strides
    sd["scalar"] = torch.tensor(3.5)
    torch.save(sd, tmp_path / "sd.pth")
    got = load_state_dict(tmp_path / "sd.pth")
    assert list(got) == list(sd)
    for k, v in sd.items():
        np.testing.assert_array_equal(got[k].data, v.to(torch.float32 if dtype == torch.float16
                                                        and k == "extra" else v.dtype).numpy())
    # parameters keep requires_grad
    torch.save({"w": torch.nn.Parameter(torch.ones(2))}, tmp_path / "p.pt")
    assert torch_load(tmp_path / "p.pt")["w"].requires_grad


# R torch's repository beside the checkout (a bare mirror or a checkout), as the
# conformance tests find it
R_TORCH = Path(os.environ.get("RTORCH_CONFORMANCE_SOURCE",
                              Path(__file__).resolve().parents[1].parent / ".mirror" /
                              "mlverse+torch" / "repo"))


def _r_torch_assets(folder: Path) -> Path:
    """R torch's tests/testthat/assets (files PyTorch wrote), copied into `folder`."""
    checkout = R_TORCH / "tests" / "testthat" / "assets"
    if checkout.exists():
        return checkout
    for name in ("state_dict.pth", "ordered_dict.pt"):
        blob = subprocess.run(["git", "--git-dir", str(R_TORCH), "show",
                               f"HEAD:tests/testthat/assets/{name}"], capture_output=True)
        assert blob.returncode == 0, blob.stderr.decode()
        (folder / name).write_bytes(blob.stdout)
    return folder


def test_reads_r_torch_test_assets(tmp_path):
    if not R_TORCH.exists():
        pytest.skip(f"R torch's test assets were NOT read: {R_TORCH} does not exist")
    assets = _r_torch_assets(tmp_path)
    d = load_state_dict(assets / "state_dict.pth")
    assert list(d) == ["ones", "twos"]
    np.testing.assert_array_equal(d["twos"].data, np.full((3, 5), 2.0, np.float32))
    d = load_state_dict(assets / "ordered_dict.pt")
    assert list(d) == ["weight", "bias"] and d["weight"].shape == (10, 10)


class _Evil:
    def __reduce__(self):
        return (print, ("this would run",))


def test_refuses_code_in_pytorch_files(tmp_path, capsys):
    torch.save({"w": torch.ones(2), "evil": _Evil()}, tmp_path / "evil.pt")
    with pytest.raises(pickle.UnpicklingError, match=r"refuses to load '(__builtin__|builtins)\.print'"):
        torch_load(tmp_path / "evil.pt")
    assert "this would run" not in capsys.readouterr().out
    m = torch.jit.script(torch.nn.Linear(2, 2))
    torch.jit.save(m, tmp_path / "jit.pt")
    with pytest.raises(ValueError, match="TorchScript"):
        torch_load(tmp_path / "jit.pt")


def test_our_files_hold_no_pickle(tmp_path):
    torch_save({"a": rt.torch_randn(2, 2), "b": [1, 2]}, tmp_path / "f.pt")
    with zipfile.ZipFile(tmp_path / "f.pt") as z:
        names = z.namelist()
        assert names == ["rtorch.json", "tensors/0.npy"]
        np.load(io.BytesIO(z.read("tensors/0.npy")), allow_pickle=False)


def test_undefined_tensors_round_trip_in_r_files():
    """An undefined tensor (None: an optimiser's unused state) is named in the
    metadata and read back as None; the tensors beside it keep their values."""
    data = r_file("list", [("a", rt.torch_tensor([1.0, 2.0])), ("b", None)])
    kind, names, tensors, robj = read_r_file(data)
    assert (kind, names, robj) == ("list", ["a", "b"], None)
    assert tensors[1] is None and tensors[0].data.tolist() == [1.0, 2.0]


def test_bad_input(tmp_path):
    with pytest.raises(TypeError, match="can't save a function"):
        torch_save({"f": lambda: 1}, tmp_path / "x.pt")
    (tmp_path / "junk.pt").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not a file saved by torch_save"):
        torch_load(tmp_path / "junk.pt")
    with pytest.raises(ValueError, match="cpu"):
        torch_save(rt.torch_randn(2), tmp_path / "t.pt") or torch_load(tmp_path / "t.pt",
                                                                         device="cuda")


def test_rtorch_objects_are_rebuilt_by_class_name(tmp_path):
    nn = pytest.importorskip("rtorch_py.nn")
    if not hasattr(nn, "nn_linear"):
        pytest.skip("rtorch_py.nn has no nn_linear yet")
    lin = nn.nn_linear(3, 2)
    torch_save({"model": lin, "again": lin}, tmp_path / "m.pt")
    got = torch_load(tmp_path / "m.pt")
    assert got["model"] is got["again"] and type(got["model"]) is type(lin)
    x = rt.torch_randn(4, 3)
    np.testing.assert_array_equal(got["model"](x).data, lin(x).data)


def test_loading_refuses_classes_outside_rtorch(tmp_path):
    import json
    torch_save([1], tmp_path / "ok.pt")
    with zipfile.ZipFile(tmp_path / "bad.pt", "w") as z:
        z.writestr("rtorch.json", json.dumps({"format": "rtorch-py", "version": 1, "root": {
            "object": "os:system", "id": 0, "state": {"dict": []}}}))
    with pytest.raises(ValueError, match="only rtorch-py's own classes"):
        torch_load(tmp_path / "bad.pt")
