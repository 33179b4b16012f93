#!/usr/bin/python3
"""Writes the NumPy / PyTorch files that tensorbus's io tests read (api/core/src/test/resources/io/).

Run from the repository root with Debian's Python, which has numpy and torch:

    /usr/bin/python3 tools/make_io_fixtures.py

Every value is a simple formula of arange, so the Java tests (io.tensorbus.io.*ParityTest) compute the
expected values themselves; the formula of each file is written next to it below and in the tests.

The `safetensors` Python package is not installed here, so the safetensors files are written by hand,
exactly per the format (https://github.com/huggingface/safetensors#format) and the reference Rust writer:
an 8-byte little-endian header length N, N bytes of compact JSON ("__metadata__" first, then the tensors
in data order) padded with spaces to a multiple of 8, then the data, tensors ordered by decreasing dtype
alignment then by name. The tensor bytes come from torch tensors of each dtype.
"""
import json
import os
import struct
import sys

import numpy as np
import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "api", "core", "src", "test", "resources", "io")


def save_npy(name, array):
    np.save(os.path.join(OUT, name), array, allow_pickle=False)


def write_npy_files():
    # float32 [3, 4] = arange(12)
    save_npy("f32_3x4.npy", np.arange(12, dtype=np.float32).reshape(3, 4))
    # float64 [2, 3] = arange(6) * 0.5
    save_npy("f64_2x3.npy", np.arange(6, dtype=np.float64).reshape(2, 3) * 0.5)
    # int64 [5] = arange(5) - 2
    save_npy("i64_5.npy", np.arange(5, dtype=np.int64) - 2)
    # int32 [2, 2] = arange(4) * 1000
    save_npy("i32_2x2.npy", np.arange(4, dtype=np.int32).reshape(2, 2) * 1000)
    # bool [2, 3] = arange(6) % 3 == 0
    save_npy("bool_2x3.npy", (np.arange(6) % 3 == 0).reshape(2, 3))
    # float16 [4] = arange(4) / 4
    save_npy("f16_4.npy", np.arange(4, dtype=np.float16) / np.float16(4))
    # float64 [2, 3, 4] = arange(24) reshaped, stored in Fortran (column-major) order
    fortran = np.asfortranarray(np.arange(24, dtype=np.float64).reshape(2, 3, 4))
    assert fortran.flags.f_contiguous and not fortran.flags.c_contiguous
    save_npy("f64_2x3x4_fortran.npy", fortran)
    # big-endian float64 [2, 3] = arange(6) * 0.5, and big-endian int32 [4] = arange(4) - 1
    save_npy("f64_2x3_bigendian.npy", (np.arange(6).reshape(2, 3) * 0.5).astype(">f8"))
    save_npy("i32_4_bigendian.npy", (np.arange(4) - 1).astype(">i4"))
    # uint8 [6] = arange(6) * 50 (read as int32)
    save_npy("u1_6.npy", (np.arange(6) * 50).astype(np.uint8))
    # 0-d float64 = 3.5
    save_npy("f64_scalar.npy", np.array(3.5, dtype=np.float64))
    # empty float32 [0, 3]
    save_npy("f32_0x3.npy", np.zeros((0, 3), dtype=np.float32))


def state_arrays():
    # weight float32 [2, 3] = arange(6); bias float64 [3] = arange(3) * 0.5; step int64 0-d = 7;
    # mask bool [4] = arange(4) % 2 == 1
    return {
        "weight": np.arange(6, dtype=np.float32).reshape(2, 3),
        "bias": np.arange(3, dtype=np.float64) * 0.5,
        "step": np.array(7, dtype=np.int64),
        "mask": np.arange(4) % 2 == 1,
    }


def write_npz_files():
    np.savez(os.path.join(OUT, "state.npz"), **state_arrays())
    np.savez_compressed(os.path.join(OUT, "state_compressed.npz"), **state_arrays())


# The reference library's dtype order, increasing alignment (safetensors/src/tensor.rs, enum Dtype).
RUST_DTYPE_ORDER = ["BOOL", "U8", "I8", "F8_E5M2", "F8_E4M3", "I16", "U16", "F16", "BF16", "I32", "U32",
                    "F32", "F64", "I64", "U64"]
TORCH_TO_SAFETENSORS = {
    torch.float32: "F32", torch.float64: "F64", torch.float16: "F16", torch.bfloat16: "BF16",
    torch.int32: "I32", torch.int64: "I64", torch.bool: "BOOL", torch.uint8: "U8", torch.int8: "I8",
    torch.int16: "I16",
}


def tensor_bytes(t):
    t = t.contiguous()
    if t.dtype == torch.bfloat16:  # numpy has no bfloat16: reinterpret the bits as int16
        t = t.view(torch.int16)
    return t.numpy().tobytes()  # little-endian on this machine, as the format requires


def save_safetensors(name, tensors, metadata=None):
    assert sys.byteorder == "little"
    names = sorted(tensors, key=lambda n: (-RUST_DTYPE_ORDER.index(TORCH_TO_SAFETENSORS[tensors[n].dtype]),
                                           n.encode("utf-8")))
    header = {}
    if metadata is not None:
        header["__metadata__"] = metadata
    data = b""
    for n in names:
        t = tensors[n]
        raw = tensor_bytes(t)
        header[n] = {"dtype": TORCH_TO_SAFETENSORS[t.dtype], "shape": list(t.shape),
                     "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


def write_safetensors_files():
    # A model-like state dict with metadata:
    # w.f32 [2, 3] = arange(6); w.f64 [4] = arange(4) * 0.25; steps.i64 [5] = arange(5) - 2;
    # h.f16 [2, 2] = arange(4) / 2; b.bf16 [4] = arange(4) * 1.5
    save_safetensors("state.safetensors", {
        "w.f32": torch.arange(6, dtype=torch.float32).reshape(2, 3),
        "w.f64": torch.arange(4, dtype=torch.float64) * 0.25,
        "steps.i64": torch.arange(5, dtype=torch.int64) - 2,
        "h.f16": (torch.arange(4, dtype=torch.float32) / 2).to(torch.float16).reshape(2, 2),
        "b.bf16": (torch.arange(4, dtype=torch.float32) * 1.5).to(torch.bfloat16),
    }, metadata={"format": "pt", "producer": "tools/make_io_fixtures.py"})
    # One torch tensor of each dtype, plus a 0-d and an empty tensor, no metadata:
    # f32 [3] = arange(3) + 0.5; f64 [3] = arange(3) / 8; f16 [3] = arange(3) - 1; bf16 [3] = arange(3) * 2;
    # i32 [3] = arange(3) * 7; i64 [3] = arange(3) - 5; bool [3] = arange(3) != 1;
    # u8 [3] = arange(3) * 100 (read as int32); i8 [3] = arange(3) - 100; i16 [3] = arange(3) * 1000 - 2000;
    # scalar f64 0-d = 2.25; empty f32 [0, 2]
    save_safetensors("dtypes.safetensors", {
        "f32": torch.arange(3, dtype=torch.float32) + 0.5,
        "f64": torch.arange(3, dtype=torch.float64) / 8,
        "f16": (torch.arange(3) - 1).to(torch.float16),
        "bf16": (torch.arange(3) * 2).to(torch.bfloat16),
        "i32": torch.arange(3, dtype=torch.int32) * 7,
        "i64": torch.arange(3, dtype=torch.int64) - 5,
        "bool": torch.arange(3) != 1,
        "u8": (torch.arange(3) * 100).to(torch.uint8),
        "i8": (torch.arange(3) - 100).to(torch.int8),
        "i16": (torch.arange(3) * 1000 - 2000).to(torch.int16),
        "scalar": torch.tensor(2.25, dtype=torch.float64),
        "empty": torch.zeros(0, 2, dtype=torch.float32),
    })


def main():
    os.makedirs(OUT, exist_ok=True)
    write_npy_files()
    write_npz_files()
    write_safetensors_files()
    total = sum(os.path.getsize(os.path.join(OUT, f)) for f in os.listdir(OUT))
    print("wrote %d files, %d bytes, to %s" % (len(os.listdir(OUT)), total, os.path.normpath(OUT)))


if __name__ == "__main__":
    main()
