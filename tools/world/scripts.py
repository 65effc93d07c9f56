"""The world table: which public scripts run, from which snapshot, with which arguments and stand-in data.

Each ``Script`` names a repository snapshot (``owner/name`` at a commit), the script's path inside it, the
command-line arguments that shrink it to a few minutes on ember, the commands run before it (data preparation
scripts, run on the same side), the synthetic data written beforehand and the URLs served locally. ``changed`` says
in words what differs from running the script as its README says; the script files themselves are never edited.
``metric`` is a regular expression whose first group is the number followed along the run (a loss).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from tools.world import data

NANOGPT = ("karpathy/nanoGPT", "3adf61e154c3fe3fca428ad6bc3818b27a3b8291")
MINGPT = ("karpathy/minGPT", "37baab71b9abea1b76ab957409a1cc2fbfba8a26")
MAKEMORE = ("karpathy/makemore", "988aa59e4d8fefa526d06f3b453ad116258398d4")
NGVIDEO = ("karpathy/ng-video-lecture", "52201428ed7b46804849dea0b3ccf0de9df1a5c3")
EXAMPLES = ("pytorch/examples", "77f55b912142e11fcfdf5b530231fb9c52f181e8")
TINYDIFF = ("tanelp/tiny-diffusion", "726b6bbbf2c9e3d23dff9eaea2fda10d0af6a78c")
CIFAR = ("kuangliu/pytorch-cifar", "49b7aa97b0c12fe0d4054e670403a16b6b834ddd")
UNET = ("milesial/Pytorch-UNet", "21d7850f2af30a9695bbeea75f3136aa538cfc4a")
VIT = ("lucidrains/vit-pytorch", "69d24fe9e3024c0d4b02761123b8583a24ebed1e")
YUNJEY = ("yunjey/pytorch-tutorial", "0500d3df5a2a8080ccfccbc00aca0eacc21818db")
PRACTICAL = ("spro/practical-pytorch", "c520c52e68e945d88fff563dba1c028b6ec0197b")
TORCHDIFFEQ = ("rtqichen/torchdiffeq", "657943acefa826ef04c025ebeb1ff5e9d60dc268")
UNET3D = ("wolny/pytorch-3dunet", "a33e2c7038a0b51296ca4f99b0f0ed4b61740705")


@dataclass
class Script:
    name: str
    source: tuple            # (owner/name, commit)
    path: str                # the script, relative to the repository root
    args: list = field(default_factory=list)
    cwd: str | None = None   # relative to the repository root; default: the script's folder
    before: list = field(default_factory=list)   # [(script path, args)] run first, same side, same folder rules
    setup: object = None     # callable(workdir: Path) writing stand-in data
    urls: dict = field(default_factory=dict)     # URL -> callable(workdir) returning the local file's bytes
    export: list | None = None  # repository folders to export (default: the whole tree)
    pythonpath: list = field(default_factory=list)  # repository folders importable (as `pip install -e .` makes)
    metric: str = r"\bLoss: ([-+0-9.eE]+)"
    accuracy: str | None = None  # a regular expression whose first group is a final accuracy (percent)
    timeout: int = 900
    changed: str = "nothing"

    def __post_init__(self):
        if self.export is None and self.source == EXAMPLES:
            self.export = [self.path.split("/")[0]]  # the snapshot lacks some large data files elsewhere


def _mnist(sub="data", name="MNIST", n_train=1280, n_test=256):
    return lambda work: data.mnist(work / sub, name, n_train, n_test)


def _text_file(rel, n_chars=60_000):
    def setup(work):
        path = work / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(data.text(n_chars))
    return setup


def _wikitext_small(work):
    """A smaller WikiText-2 beside the repository's copy (whose train.txt the snapshot lacks): the first 600 lines
    of its valid.txt to train on, the next 120 to validate, the first 120 of test.txt to test."""
    src, dst = work / "word_language_model/data/wikitext-2", work / "word_language_model/data/wikitext-2-small"
    dst.mkdir(parents=True, exist_ok=True)
    valid = (src / "valid.txt").read_text(encoding="utf8").splitlines(keepends=True)
    test = (src / "test.txt").read_text(encoding="utf8").splitlines(keepends=True)
    for split, lines in (("train", valid[:600]), ("valid", valid[600:720]), ("test", test[:120])):
        (dst / f"{split}.txt").write_text("".join(lines), encoding="utf8")


def _bsds(work):
    for split, n in (("train", 8), ("test", 4)):
        data.image_folder(work / "super_resolution/dataset/BSDS300/images" / split, n=n, size=(260, 260),
                          seed=len(split))


def _yunjey(name, path, setup=None, **kw):
    kw.setdefault("metric", r"\bLoss: ([0-9.]+)")
    kw.setdefault("accuracy", r"Accuracy[^:]*: ([0-9.]+) %")
    kw.setdefault("export", [f"tutorials/{path}"])
    return Script(f"pytorch-tutorial {name}", YUNJEY, f"tutorials/{path}/main.py", setup=setup, **kw)


_YUNJEY_MNIST = _mnist("tutorials/data", n_train=10_000, n_test=1_000)
_EXAMPLES_ACC = r"Accuracy: \d+/\d+ \((\d+)%\)"
_MNIST_ARGS = ["--epochs", "1", "--batch-size", "64", "--test-batch-size", "256", "--log-interval", "5"]
_TRAIN_SHAKESPEARE = ["config/train_shakespeare_char.py", "--device=cpu", "--compile=False", "--eval_iters=4",
                      "--log_interval=5", "--block_size=64", "--batch_size=8", "--n_layer=2", "--n_head=4",
                      "--n_embd=64", "--max_iters=60", "--lr_decay_iters=60", "--warmup_iters=10",
                      "--eval_interval=30", "--dropout=0.0"]

SCRIPTS = [
    Script("nanoGPT train+sample (shakespeare_char)", NANOGPT, "train.py", _TRAIN_SHAKESPEARE, cwd=".",
           before=[("data/shakespeare_char/prepare.py", [])],
           setup=_text_file("data/shakespeare_char/input.txt", 200_000),
           metric=r"iter \d+: loss ([0-9.]+)", timeout=1200,
           changed="input.txt is synthetic English-like text (200k chars); a 2-layer 64-wide model, 60 iters, "
                   "block 64, batch 8, eval_iters 4, dropout 0, --device=cpu --compile=False (all via the "
                   "configurator's command line)"),
    Script("nanoGPT sample.py (from the checkpoint above)", NANOGPT, "sample.py",
           ["--out_dir=out-shakespeare-char", "--device=cpu", "--compile=False", "--num_samples=2",
            "--max_new_tokens=40"], cwd=".",
           before=[("data/shakespeare_char/prepare.py", []), ("train.py", _TRAIN_SHAKESPEARE[:9] + [
               "--max_iters=10", "--lr_decay_iters=10", "--warmup_iters=2", "--eval_interval=10", "--dropout=0.0"])],
           setup=_text_file("data/shakespeare_char/input.txt", 200_000), metric=r"(?!)", timeout=900,
           changed="as above, 10 training iterations to make out-shakespeare-char/ckpt.pt, then 2 samples of 40 "
                   "tokens"),
    Script("minGPT adder", MINGPT, "projects/adder/adder.py",
           ["--trainer.max_iters=60", "--trainer.batch_size=32", "--trainer.device=cpu", "--model.model_type=None",
            "--model.n_layer=2", "--model.n_head=2", "--model.n_embd=32", "--trainer.num_workers=0"], cwd=".",
           metric=r"train loss ([0-9.]+)", timeout=900, pythonpath=["."],
           changed="a 2-layer 32-wide GPT, 60 iterations, batch 32, num_workers 0 (command-line config)"),
    Script("minGPT chargpt", MINGPT, "projects/chargpt/chargpt.py",
           ["--trainer.max_iters=40", "--trainer.batch_size=16", "--trainer.device=cpu", "--model.model_type=None",
            "--model.n_layer=2", "--model.n_head=2", "--model.n_embd=32", "--data.block_size=32",
            "--trainer.num_workers=0"], cwd="projects/chargpt", setup=_text_file("projects/chargpt/input.txt"),
           pythonpath=["."],
           metric=r"train loss ([0-9.]+)", timeout=900,
           changed="input.txt synthetic; 2-layer 32-wide GPT, block 32, 40 iterations (command-line config)"),
    *[Script(f"makemore --type {kind}", MAKEMORE, "makemore.py",
             ["-i", "names.txt", "-o", f"out-{kind}", "--type", kind, "--max-steps", "120", "--num-workers", "0",
              "--n-layer", "2", "--n-embd", "32", "--n-embd2", "32", "--batch-size", "32"],
             metric=r"step \d+ \| loss ([0-9.]+)", timeout=900,
             changed="120 steps, 2 layers, width 32, num_workers 0 (arguments)")
      for kind in ("bigram", "mlp", "rnn", "gru", "bow", "transformer")],
    Script("ng-video-lecture bigram.py", NGVIDEO, "bigram.py", metric=r"train loss ([0-9.]+)", timeout=900,
           changed="nothing (3000 iterations of the bigram model on the repository's input.txt)"),
    Script("examples mnist", EXAMPLES, "mnist/main.py", _MNIST_ARGS + ["--save-model"], setup=_mnist(),
           accuracy=_EXAMPLES_ACC,
           changed="synthetic MNIST (1,280 train / 256 test, templated classes); 1 epoch"),
    Script("examples mnist_rnn", EXAMPLES, "mnist_rnn/main.py", _MNIST_ARGS, setup=_mnist(), accuracy=_EXAMPLES_ACC,
           changed="synthetic MNIST; 1 epoch"),
    Script("examples mnist_hogwild", EXAMPLES, "mnist_hogwild/main.py",
           ["--epochs", "1", "--num-processes", "2", "--log-interval", "5", "--test-batch-size", "256"],
           setup=_mnist(), accuracy=_EXAMPLES_ACC, changed="synthetic MNIST; 1 epoch, 2 processes"),
    Script("examples mnist_forward_forward", EXAMPLES, "mnist_forward_forward/main.py",
           ["--epochs", "20", "--train_size", "1000", "--test_size", "256", ],
           setup=_mnist("mnist_forward_forward/data"), metric=r"[Ll]oss[:= ]+\s*([-+0-9.eE]+)",
           changed="synthetic MNIST; 20 epochs of 1,000 samples"),
    Script("examples vae", EXAMPLES, "vae/main.py", ["--epochs", "1", "--log-interval", "2"], setup=_mnist(),
           changed="synthetic MNIST; 1 epoch"),
    Script("examples siamese_network", EXAMPLES, "siamese_network/main.py",
           ["--epochs", "1", "--batch-size", "32", "--test-batch-size", "64", "--log-interval", "5"],
           setup=_mnist(), changed="synthetic MNIST; 1 epoch, batch 32"),
    Script("examples dcgan (FakeData)", EXAMPLES, "dcgan/main.py",
           ["--dataset", "fake", "--workers", "0", "--batchSize", "16", "--niter", "1", "--ngf", "16", "--ndf", "16",
            "--nz", "16", "--outf", "out", "--manualSeed", "1"],
           setup=lambda work: (work / "dcgan/out").mkdir(parents=True, exist_ok=True),
           metric=r"Loss_D: ([0-9.]+)", timeout=1200,
           changed="the script's own FakeData set (1,000 images); 1 epoch, batch 16, 16 filters, nz 16, workers 0"),
    Script("examples regression", EXAMPLES, "regression/main.py", metric=r"Loss: ([0-9.]+)",
           changed="nothing"),
    Script("examples time_sequence_prediction", EXAMPLES, "time_sequence_prediction/train.py", ["--steps", "2"],
           before=[("time_sequence_prediction/generate_sine_wave.py", [])], metric=r"^loss: ([0-9.eE-]+)",
           timeout=1500, changed="2 LBFGS steps instead of 15"),
    Script("examples super_resolution", EXAMPLES, "super_resolution/main.py",
           ["--upscale_factor", "3", "--batchSize", "4", "--testBatchSize", "4", "--nEpochs", "2", "--lr", "0.001",
            "--threads", "0"], setup=_bsds, metric=r"Avg\. Loss: ([0-9.]+)",
           changed="BSDS300 replaced by 8 train / 4 test synthetic 260x260 JPEGs; threads 0"),
    Script("examples gcn", EXAMPLES, "gcn/main.py", ["--epochs", "40", "--val-every", "5"],
           urls={"https://linqs-data.soe.ucsc.edu/public/lbc/cora.tgz": lambda work: data.cora_tgz()},
           metric=r"loss_train: ([0-9.]+)", changed="cora.tgz served locally (synthetic Cora: same sizes, "
                                                      "7 classes); 40 epochs"),
    Script("examples gat", EXAMPLES, "gat/main.py", ["--epochs", "20", "--val-every", "5", "--hidden-dim", "16",
                                                     "--num-heads", "2"],
           urls={"https://linqs-data.soe.ucsc.edu/public/lbc/cora.tgz": lambda work: data.cora_tgz()},
           metric=r"loss_train: ([0-9.]+)", timeout=1500,
           changed="cora.tgz served locally (synthetic); 20 epochs, hidden 16, 2 heads"),
    Script("examples word_language_model (LSTM)", EXAMPLES, "word_language_model/main.py",
           ["--data", "./data/wikitext-2-small", "--epochs", "1", "--emsize", "32", "--nhid", "32", "--bptt", "20",
            "--log-interval", "5"], setup=_wikitext_small, metric=r"loss\s+([0-9.]+)",
           changed="WikiText-2 (snapshot lacks train.txt): 600 lines of valid.txt to train, 120 to validate, "
                   "120 of test.txt; width 32, 1 epoch"),
    Script("examples word_language_model (Transformer)", EXAMPLES, "word_language_model/main.py",
           ["--data", "./data/wikitext-2-small", "--epochs", "1", "--emsize", "32", "--nhid", "32", "--bptt", "20",
            "--model", "Transformer", "--lr", "5", "--log-interval", "5"], setup=_wikitext_small,
           metric=r"loss\s+([0-9.]+)", changed="as above, --model Transformer --lr 5"),
    Script("tiny-diffusion ddpm (moons)", TINYDIFF, "ddpm.py",
           ["--dataset", "moons", "--num_epochs", "2", "--train_batch_size", "64", "--eval_batch_size", "200",
            "--num_timesteps", "50", "--hidden_size", "64", "--embedding_size", "32", "--save_images_step", "1"],
           metric=r"loss=([0-9.]+)", changed="moons data set (sklearn), 2 epochs, width 64"),
    _yunjey("linear_regression", "01-basics/linear_regression", changed="nothing (60 epochs on 15 points)"),
    _yunjey("logistic_regression", "01-basics/logistic_regression", _YUNJEY_MNIST,
            changed="synthetic MNIST, 10,000 train / 1,000 test (the script's 5 epochs, batch 100)"),
    _yunjey("feedforward_neural_network", "01-basics/feedforward_neural_network", _YUNJEY_MNIST,
            changed="synthetic MNIST, 10,000 / 1,000; 5 epochs"),
    _yunjey("convolutional_neural_network", "02-intermediate/convolutional_neural_network", _YUNJEY_MNIST,
            timeout=1500, changed="synthetic MNIST, 10,000 / 1,000; 5 epochs"),
    _yunjey("recurrent_neural_network", "02-intermediate/recurrent_neural_network", _YUNJEY_MNIST,
            changed="synthetic MNIST, 10,000 / 1,000; 2 epochs (LSTM, 2 layers, 128)"),
    _yunjey("bidirectional_recurrent_neural_network", "02-intermediate/bidirectional_recurrent_neural_network",
            _YUNJEY_MNIST, changed="synthetic MNIST, 10,000 / 1,000; 2 epochs (bidirectional LSTM)"),
    _yunjey("deep_residual_network", "02-intermediate/deep_residual_network",
            lambda work: data.cifar10(work / "tutorials/data", n_train=200, n_test=100), timeout=1800,
            changed="synthetic CIFAR-10, 200 train / 100 test (Pad/RandomHorizontalFlip/RandomCrop transforms); "
                    "the script's 80 epochs of batch 100"),
    _yunjey("language_model", "02-intermediate/language_model",
            _text_file("tutorials/02-intermediate/language_model/data/train.txt", 40_000),
            export=[f"tutorials/02-intermediate/language_model/{f}.py" for f in ("main", "data_utils")],
            metric=r"Loss: ([0-9.]+), Perp", timeout=1500,
            changed="train.txt (Penn Treebank; the snapshot lacks it) is 40k characters of synthetic text; the "
                    "script's 5 epochs, then 1,000 sampled words"),
    _yunjey("generative_adversarial_network", "03-advanced/generative_adversarial_network",
            _mnist("tutorials/data", n_train=1_200), metric=r"d_loss: ([0-9.]+)", timeout=1500,
            changed="synthetic MNIST, 1,200 images (whole batches of 100, as the script assumes): 12 steps an "
                    "epoch, so the loss line (every 200 steps) never prints; the script's 200 epochs, save_image "
                    "each epoch"),
    _yunjey("variational_autoencoder", "03-advanced/variational_autoencoder", _mnist("tutorials/data"),
            metric=r"Reconst Loss: ([0-9.]+)", changed="synthetic MNIST, 1,280 images; the script's 15 epochs"),
    Script("practical-pytorch char-rnn-generation", PRACTICAL, "char-rnn-generation/train.py",
           ["input.txt", "--n_epochs", "20", "--print_every", "5", "--chunk_len", "50"],
           setup=_text_file("char-rnn-generation/input.txt"), metric=r"\((?:\d+) \d+%\) ([0-9.]+)\]",
           changed="synthetic input.txt; 20 epochs of 50 characters (written for torch 0.3: `loss.data[0]`)"),
    Script("practical-pytorch char-rnn-classification", PRACTICAL, "char-rnn-classification/train.py",
           metric=r"% \(\S+ \S+\) ([0-9.]+) ", changed="nothing (written for torch 0.3: `loss.data[0]`)"),
    Script("torchdiffeq ode_demo (dopri5)", TORCHDIFFEQ, "examples/ode_demo.py", ["--niters", "60",
                                                                                "--test_freq", "10"],
           cwd=".", pythonpath=["."], metric=r"Total Loss ([0-9.]+)", changed="60 iterations"),
    Script("torchdiffeq ode_demo (adjoint)", TORCHDIFFEQ, "examples/ode_demo.py",
           ["--niters", "30", "--test_freq", "10", "--adjoint"], cwd=".", pythonpath=["."],
           metric=r"Total Loss ([0-9.]+)", changed="30 iterations, --adjoint"),
    Script("torchdiffeq latent_ode", TORCHDIFFEQ, "examples/latent_ode.py", ["--niters", "20"], cwd=".",
           pythonpath=["."], metric=r"running avg elbo: (-?[0-9.]+)", timeout=1500, changed="20 iterations"),
    Script("torchdiffeq cnf", TORCHDIFFEQ, "examples/cnf.py", ["--niters", "20", "--num_samples", "128"], cwd=".",
           pythonpath=["."], metric=r"running avg loss: ([0-9.]+)", timeout=1500,
           changed="20 iterations, 128 samples"),
]

BY_NAME = {s.name: s for s in SCRIPTS}


def work_url_files(script, work: Path):
    """Writes the stand-ins for the script's URLs under ``work/.world-urls`` and returns the URL table."""
    table = {}
    folder = work / ".world-urls"
    for i, (url, make) in enumerate(script.urls.items()):
        folder.mkdir(exist_ok=True)
        path = folder / f"{i}"
        path.write_bytes(make(work))
        table[url] = str(path)
    return table
