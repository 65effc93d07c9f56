"""Small synthetic stand-ins for the data sets the world scripts would download (NumPy, PIL and the standard library).

Each maker writes files in the on-disk format the script's own loader reads (MNIST's idx files, CIFAR-10's pickled
batches, Cora's tab-separated tables, a folder of JPEGs), so the script's loading code runs unchanged. Labels are
learnable: every class has a fixed random template and each sample is its template plus noise, so a loss that falls
on torch must fall on ember too. Everything is seeded: both sides see the same bytes.
"""
from __future__ import annotations

import gzip
import io
import os
import pickle
import struct
import tarfile
from pathlib import Path

import numpy as np


def _templated(n, shape, classes, seed, noise=60.0):
    """``n`` uint8 samples of ``shape``: class template (0..255) plus Gaussian noise; returns (samples, labels).
    The templates depend on the shape and class count only, so a train and a test split share them."""
    templates = np.random.default_rng(len(shape) * 1000 + classes).uniform(0, 255, (classes, *shape))
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, classes, n)
    samples = templates[labels] + rng.normal(0, noise, (n, *shape))
    return np.clip(samples, 0, 255).astype(np.uint8), labels.astype(np.uint8)


def _idx(array):
    """Bytes of an idx file (the MNIST format): magic with the dtype code and rank, the sizes, then the data."""
    head = struct.pack(">HBB", 0, 0x08, array.ndim) + b"".join(struct.pack(">I", s) for s in array.shape)
    return head + array.tobytes()


def mnist(root, name="MNIST", n_train=1280, n_test=256):
    """``root/<name>/raw/`` with the four idx files torchvision's MNIST/FashionMNIST read (28x28, 10 classes)."""
    raw = Path(root) / name / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    for split, n, seed in (("train", n_train, 0), ("t10k", n_test, 1)):
        images, labels = _templated(n, (28, 28), 10, seed)
        (raw / f"{split}-images-idx3-ubyte").write_bytes(_idx(images))
        (raw / f"{split}-labels-idx1-ubyte").write_bytes(_idx(labels))
        for suffix, arr in (("images-idx3-ubyte", images), ("labels-idx1-ubyte", labels)):
            with gzip.open(raw / f"{split}-{suffix}.gz", "wb") as f:
                f.write(_idx(arr))


def cifar10(root, n_train=500, n_test=100):
    """``root/cifar-10-batches-py/`` with five training batches, a test batch and batches.meta (32x32 RGB)."""
    base = Path(root) / "cifar-10-batches-py"
    base.mkdir(parents=True, exist_ok=True)
    images, labels = _templated(n_train + n_test, (3, 32, 32), 10, 2)
    flat = images.reshape(len(images), -1)
    per = n_train // 5
    for i in range(5):
        part = slice(i * per, (i + 1) * per)
        batch = {"data": flat[part], "labels": [int(v) for v in labels[part]]}  # what latin1 makes of b"data"
        (base / f"data_batch_{i + 1}").write_bytes(pickle.dumps(batch))
    test = {"data": flat[n_train:], "labels": [int(v) for v in labels[n_train:]]}
    (base / "test_batch").write_bytes(pickle.dumps(test))
    names = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"]
    (base / "batches.meta").write_bytes(pickle.dumps({"label_names": names}))


def cora_tgz(nodes=2708, features=1433, classes=7, edges=5429):
    """Bytes of a ``cora.tgz`` holding ``cora/cora.content`` and ``cora/cora.cites`` (Cora's layout and sizes)."""
    rng = np.random.default_rng(3)
    ids = rng.choice(1_000_000, nodes, replace=False)
    labels = rng.integers(0, classes, nodes)
    topics = rng.random((classes, features)) < 0.02
    feats = (rng.random((nodes, features)) < 0.005) | (topics[labels] & (rng.random((nodes, features)) < 0.5))
    names = [f"Class_{c}" for c in range(classes)]
    content = "".join(f"{i}\t" + "\t".join(map(str, row.astype(int))) + f"\t{names[c]}\n"
                      for i, row, c in zip(ids, feats, labels))
    # Mostly same-class citations, so a graph network learns from the edges too.
    src = rng.integers(0, nodes, edges)
    by_class = [np.flatnonzero(labels == c) for c in range(classes)]
    dst = np.array([rng.choice(by_class[labels[s]]) if rng.random() < 0.8 else rng.integers(0, nodes) for s in src])
    cites = "".join(f"{ids[d]}\t{ids[s]}\n" for s, d in zip(src, dst))
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, text in (("cora/cora.content", content), ("cora/cora.cites", cites)):
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def image_folder(root, n=12, size=(96, 96), seed=4):
    """``n`` JPEG photos-to-be (smooth random colour fields) under ``root`` (created)."""
    from PIL import Image

    rng = np.random.default_rng(seed)
    os.makedirs(root, exist_ok=True)
    h, w = size
    y, x = np.mgrid[0:h, 0:w] / max(h, w)
    for i in range(n):
        f = rng.uniform(1, 6, (3, 2))
        ph = rng.uniform(0, 6.3, (3,))
        img = np.stack([np.sin(f[c, 0] * 6.3 * x + f[c, 1] * 6.3 * y + ph[c]) for c in range(3)], -1)
        Image.fromarray(((img + 1) * 127.5).astype(np.uint8)).save(Path(root) / f"img_{i:03d}.jpg")


def text(n_chars=60_000, seed=5):
    """English-looking text: sentences drawn from a small vocabulary with a fixed bigram habit, some commas, and now
    and then "O God, O God!"."""
    rng = np.random.default_rng(seed)
    words = ("the of and to in is was he for it with as his on be at by had are but from or have an they which one "
             "you were her all she there would their we him been has when who will more no if out so said what up its "
             "about into than them can only other new some could time these two may then do first any my now such "
             "like our over man me even most made after also did many before must through back years where much your "
             "way well down should because each just those people how too little state good very make world still "
             "own see men work long get here between both life being under never day same another know while last "
             "might us great old year off come since against go came right used take three").split()
    out, size = [], 0
    while size < n_chars:
        k = int(rng.integers(4, 14))
        start = int(rng.integers(0, len(words) - k))
        chosen = words[start:start + k]
        if k > 6 and rng.random() < 0.4:
            chosen[3] += ","
        sentence = " ".join(chosen).capitalize() + rng.choice([".", ".", "?", "!"])
        if rng.random() < 0.03:  # the phrase minGPT's chargpt starts its samples from
            sentence = "O God, O God!"
        out.append(sentence)
        size += len(sentence) + 1
        if rng.random() < 0.15:
            out.append("\n")
    return " ".join(out)[:n_chars] + "\n"
