"""Fashion-MNIST as the JVM ranks of these examples read it: the gzip IDX files, pixels normalised as
tensorbus's FashionMnist does, (x / 255 - 0.2860) / 0.3530 in float32, images flattened to 784 values."""
import gzip
import os

import numpy as np
import torch

DEBIAN_DIR = '/usr/share/datasets/fashion-mnist'


def load(directory, train, limit=None):
    """(images float32 [N, 784], labels int64 [N]) of the training or the test files in `directory`."""
    kind = 'train' if train else 't10k'
    with gzip.open(os.path.join(directory, kind + '-images-idx3-ubyte.gz')) as f:
        images = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 784)
    with gzip.open(os.path.join(directory, kind + '-labels-idx1-ubyte.gz')) as f:
        labels = np.frombuffer(f.read(), np.uint8, offset=8)
    x = (torch.from_numpy(images.astype(np.float32)) / 255 - 0.2860) / 0.3530
    y = torch.from_numpy(labels.astype(np.int64))
    return (x[:limit], y[:limit]) if limit else (x, y)
