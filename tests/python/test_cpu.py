"""grove.cpu_info() names the vector code the library runs, and a GROVE_CPU
grove does not know fails the import with the sentence the CLI prints."""
import os
import subprocess
import sys

from conftest import ROOT

SENTENCE = "GROVE_CPU=avx-512: expected portable, avx2 or native (or unset)"


def python(code, cap):
    """Run code in a fresh interpreter (GROVE_CPU is read once per process)."""
    env = dict(os.environ, GROVE_CPU=cap, PYTHONPATH=str(ROOT / "python"))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)


def test_cpu_info_follows_the_cap():
    run = python("import grove; print(grove.cpu_info())", "portable")
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("portable (GROVE_CPU=portable; features: ")


def test_an_unknown_grove_cpu_fails_the_import():
    run = python("import grove", "avx-512")
    assert run.returncode != 0
    assert run.stderr.strip().splitlines()[-1] == f"grove._errors.InvalidArgumentError: {SENTENCE}"


def test_the_library_runs_the_portable_code_and_says_so():
    # The C call itself, without the binding's check: the status, the
    # sentence, and the fallback the header documents.
    code = ("import ctypes, os\n"
            "lib = ctypes.CDLL(os.environ['GROVE_LIB'])\n"
            "lib.grove_last_error.restype = ctypes.c_char_p\n"
            "text = ctypes.create_string_buffer(512)\n"
            "print(lib.grove_cpu_info(text, 512))\n"
            "print(text.value.decode())\n"
            "print(lib.grove_last_error().decode())\n")
    run = python(code, "avx-512")
    assert run.returncode == 0, run.stderr
    status, text, error = run.stdout.splitlines()
    assert status == "1"  # GROVE_INVALID_ARGUMENT
    assert text.startswith("portable (GROVE_CPU=avx-512 unknown, so portable; features: ")
    assert error == SENTENCE
