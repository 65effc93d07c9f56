"""torch.ops.load_library: ember loads no compiled extension and says so with torch's exception type (OSError),
which callers such as torchvision's extension loader catch to go on without their C++ operators."""
import pytest

from oracle import ember, torch


@pytest.mark.parametrize("lib", [ember, torch], ids=["ember", "torch"])
def test_a_library_that_cannot_load_raises_oserror(lib, tmp_path):
    for path in (str(tmp_path / "absent.so"), tmp_path / "absent.so"):
        with pytest.raises(OSError):
            lib.ops.load_library(path)


def test_an_existing_file_is_refused_too(tmp_path):
    bogus = tmp_path / "ext.so"
    bogus.write_bytes(b"not an ELF file")
    for lib in (ember, torch):
        with pytest.raises(OSError):
            lib.ops.load_library(str(bogus))


def test_not_a_top_level_name():
    assert hasattr(torch, "load_library") is hasattr(ember, "load_library") is False
