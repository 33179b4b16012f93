"""The safetensors writer of the golden-value scripts: little-endian tensors behind a JSON header padded to 8."""
import json
import os
import struct
import sys

import torch

DTYPES = {torch.float32: "F32", torch.int64: "I64"}


def save_safetensors(out_dir, name, tensors):
    """Writes `tensors` (a name -> tensor dict, in name order) to out_dir/name, creating out_dir."""
    assert sys.byteorder == "little"
    header, data = {}, b""
    for n in sorted(tensors):
        raw = tensors[n].detach().contiguous().numpy().tobytes()
        header[n] = {"dtype": DTYPES[tensors[n].dtype], "shape": list(tensors[n].shape),
                     "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, name), "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)
