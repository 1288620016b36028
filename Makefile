# grove — one top-level make.
#   make                 build/libgrove.a, build/libgrove.so, build/grove
#   make check           build and run the tests at small sizes, a few minutes on 2 cores
#                        (closing line "N passed, N failed, N skipped")
#   make check-all       every test, the long ones too (large sizes, many MPI ranks): what CI runs
#   make demo            run each module on generated data
#   make check-asan      the tests under AddressSanitizer + UBSan (build-asan/)
#   make check-valgrind  the tests under valgrind memcheck (TESTS=... selects)
#   make check-oclgrind  the device kernels under oclgrind on tiny inputs (races, bounds)
#   make check-cuda      the CUDA kernels for every architecture: no spills, registers in budget
#   make fuzz            each parser's libFuzzer target for FUZZ_SECONDS (clang)
#   make install PREFIX=/usr/local DESTDIR=
#   make dist            the C source tarball, the Python sdist and the wheel into dist/
#   make NATIVE=1        opt in to -march=native (portable by default)

CC ?= cc
ifeq ($(origin CC),default)
CC := cc
endif
BUILD ?= build
PREFIX ?= /usr/local
NATIVE ?= 0
WERROR ?= 0
OPT ?= -O3
FUZZ_SECONDS ?= 60
# make V=1 shows full compiler command lines.
V ?= 0
ifeq ($(V),1)
Q :=
else
Q := @
endif

WARN := -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
        -Wformat=2 -Wvla -Wpointer-arith -Wcast-qual -Wundef
ifeq ($(WERROR),1)
WARN += -Werror
endif
ARCH :=
ifeq ($(NATIVE),1)
ARCH := -march=native
endif

# Optional parts, detected here and reported by `grove info`.
HAVE_PNG := $(shell pkg-config --exists libpng 2>/dev/null && echo 1)
OPTIONAL_CFLAGS :=
OPTIONAL_LIBS :=
ifeq ($(HAVE_PNG),1)
OPTIONAL_CFLAGS += -DGROVE_HAVE_PNG $(shell pkg-config --cflags libpng)
OPTIONAL_LIBS += $(shell pkg-config --libs libpng)
endif
# HDF5 snapshots with libhdf5 (Debian: libhdf5-dev, whose pkg-config name
# is hdf5): src/io/hdf5_*.c become build/libgrove_hdf5.so, the only thing
# that links libhdf5, which libgrove loads at the first HDF5 file
# (src/io/hdf5_plugin.h says why). HDF5=0 leaves it out (the Python
# package's build does: its wheel must not carry libhdf5 and what that
# links).
HDF5 ?= 1
ifeq ($(HDF5),1)
HAVE_HDF5 := $(shell pkg-config --exists hdf5 2>/dev/null && echo 1)
endif
HDF5_CFLAGS :=
ifeq ($(HAVE_HDF5),1)
HDF5_CFLAGS := -DGROVE_HAVE_HDF5 $(shell pkg-config --cflags hdf5)
OPTIONAL_CFLAGS += $(HDF5_CFLAGS)
HDF5_LIBS := $(shell pkg-config --libs hdf5)
endif
# The distributed part (src/mpi) when an MPI compiler wrapper is found; its
# flags are asked from the wrapper (Open MPI's --showme, MPICH's -compile-info
# style), and the code is built with $(CC) like the rest. MPI=0 leaves it out
# (the Python package's build does: its wheel must not depend on an MPI).
MPI ?= 1
MPICC ?= mpicc
ifeq ($(MPI),1)
MPI_CFLAGS := $(shell $(MPICC) --showme:compile 2>/dev/null || $(MPICC) -compile_info 2>/dev/null | cut -d' ' -f2- | tr ' ' '\n' | grep -E '^-[ID]' | tr '\n' ' ')
MPI_LIBS := $(shell $(MPICC) --showme:link 2>/dev/null || $(MPICC) -link_info 2>/dev/null | cut -d' ' -f2- | tr ' ' '\n' | grep -E '^-[lLW]' | tr '\n' ' ')
HAVE_MPI := $(if $(strip $(MPI_LIBS)),1)
endif
ifeq ($(HAVE_MPI),1)
OPTIONAL_CFLAGS += -DGROVE_HAVE_MPI $(MPI_CFLAGS)
OPTIONAL_LIBS += $(MPI_LIBS)
endif

# The device backends (docs/gpu.md). OpenCL when its headers are found
# (Debian: ocl-icd-opencl-dev): src/device/opencl*.c, the kernels embedded
# as OpenCL C, libOpenCL.so.1 opened at run time (no link dependency).
# CUDA when nvcc is found: build/libgrove_cuda.so (src/device/cuda, the
# same kernels compiled for CUDA_ARCHS plus PTX of the last), which
# libgrove loads at run time. OPENCL=0 / CUDA=0 leave them out.
OPENCL ?= 1
ifeq ($(OPENCL),1)
HAVE_OPENCL := $(shell printf '\043define CL_TARGET_OPENCL_VERSION 120\n\043include <CL/cl.h>\n' | $(CC) -E -x c - >/dev/null 2>&1 && echo 1)
endif
ifeq ($(HAVE_OPENCL),1)
OPTIONAL_CFLAGS += -DGROVE_HAVE_OPENCL
endif
CUDA ?= 1
CUDA_HOME ?= /usr/local/cuda
NVCC ?= $(shell command -v nvcc 2>/dev/null || { test -x $(CUDA_HOME)/bin/nvcc && echo $(CUDA_HOME)/bin/nvcc; })
CUDA_ARCHS ?= 80 90 100
ifeq ($(CUDA),1)
HAVE_CUDA := $(if $(NVCC),$(shell test -f $(CUDA_HOME)/include/cuda.h && echo 1))
endif
ifeq ($(HAVE_CUDA),1)
OPTIONAL_CFLAGS += -DGROVE_HAVE_CUDA
endif

BASE_CFLAGS := -std=c11 -D_POSIX_C_SOURCE=200809L $(OPT) -g $(ARCH) -fopenmp $(WARN)
CFLAGS ?=
ALL_CFLAGS = $(BASE_CFLAGS) $(SANITIZE) $(CFLAGS) -Iinclude
LIB_CFLAGS = $(ALL_CFLAGS) -fPIC -fvisibility=hidden -DGROVE_BUILDING -Isrc/core $(OPTIONAL_CFLAGS) \
             -DGROVE_BUILD_CC='"$(shell $(CC) --version | head -n 1)"' \
             -DGROVE_BUILD_FLAGS='"$(strip $(BASE_CFLAGS) $(SANITIZE) $(CFLAGS))"'
LDLIBS := -lm -ldl $(OPTIONAL_LIBS)

# The distributed part, src/mpi, is built only with MPI; without it,
# src/dispatch/without_mpi.c answers the MPI calls for a process alone (and
# the dispatch layer's distributed column is empty: src/dispatch/dispatch.h).
# The HDF5 part, src/io/hdf5_*.c, is libgrove_hdf5.so's, built only with
# libhdf5, and src/io/load_hdf5.c loads it; without libhdf5,
# src/io/without_hdf5.c refuses HDF5 files saying why.
# The OpenCL part, src/device/opencl*.c, is built only with the OpenCL
# headers; src/device/cuda is the CUDA library's (libgrove_cuda.so), not
# libgrove's.
ALL_SRC := $(sort $(filter-out src/device/cuda/%,$(shell find src -name '*.c')))
MPI_PART := $(filter src/mpi/%,$(ALL_SRC))
HDF5_PART := $(filter src/io/hdf5_%,$(ALL_SRC))
OPENCL_PART := $(filter src/device/opencl%,$(ALL_SRC))
LEFT_OUT := $(if $(HAVE_MPI),src/dispatch/without_mpi.c,$(MPI_PART)) \
            $(HDF5_PART) $(if $(HAVE_HDF5),src/io/without_hdf5.c,src/io/load_hdf5.c) \
            $(if $(HAVE_OPENCL),,$(OPENCL_PART))
LIB_SRC := $(filter-out $(LEFT_OUT),$(ALL_SRC))
# The fuzz targets' library: none of the optional parts.
FUZZ_SRC := $(filter-out $(MPI_PART) $(HDF5_PART) src/io/load_hdf5.c $(OPENCL_PART),$(ALL_SRC))
CLI_SRC := $(sort $(wildcard cli/*.c))
TEST_SRC := $(sort $(wildcard tests/*.c))
MPI_TEST_SRC := $(sort $(wildcard tests/mpi/*.c))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/obj/%.o)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/obj/%.o)
MPI_TEST_OBJ := $(MPI_TEST_SRC:%.c=$(BUILD)/obj/%.o)

all: $(BUILD)/libgrove.a $(BUILD)/libgrove.so $(BUILD)/grove $(BUILD)/grove.pc $(if $(HAVE_CUDA),$(BUILD)/libgrove_cuda.so) \
     $(if $(HAVE_HDF5),$(BUILD)/libgrove_hdf5.so)

# The OpenCL program: kernels/all.h with its includes inlined, as bytes.
KERNEL_SRC := $(sort $(wildcard src/device/kernels/*.h))
$(BUILD)/gen/device_kernels.inc: $(KERNEL_SRC) src/device/embed_kernels.sh
	@mkdir -p $(dir $@)
	$(Q)sh src/device/embed_kernels.sh src/device/kernels/all.h > $@.tmp && mv $@.tmp $@
$(BUILD)/obj/src/device/opencl_source.o: $(BUILD)/gen/device_kernels.inc
$(BUILD)/obj/src/device/opencl_source.o: LIB_CFLAGS += -I$(BUILD)/gen

# The CUDA library: the kernels as a fatbin (machine code per CUDA_ARCHS,
# PTX of the last for later GPUs), embedded by bin2c into the driver-API
# backend; flags that keep the join's arithmetic the CPU's (no fast math).
CUDA_GENCODE = $(foreach a,$(CUDA_ARCHS),-gencode arch=compute_$(a),code=sm_$(a)) \
               -gencode arch=compute_$(lastword $(CUDA_ARCHS)),code=compute_$(lastword $(CUDA_ARCHS))
NVCC_FLAGS = -O3 -std=c++17 -Xcompiler -fPIC
$(BUILD)/cuda/kernels.fatbin: src/device/cuda/kernels.cu $(KERNEL_SRC) Makefile
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  NVCC    $<")
	$(Q)$(NVCC) $(NVCC_FLAGS) $(CUDA_GENCODE) -fatbin -o $@ $<
$(BUILD)/gen/cuda_fatbin.inc: $(BUILD)/cuda/kernels.fatbin
	@mkdir -p $(dir $@)
	$(Q)$(dir $(NVCC))bin2c --name grove_cuda_fatbin --type char --const $< > $@
$(BUILD)/cuda/backend.o: src/device/cuda/backend.c src/device/backend.h src/device/kernel_names.h $(BUILD)/gen/cuda_fatbin.inc Makefile
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -fPIC -fvisibility=hidden -I$(CUDA_HOME)/include -I$(BUILD)/gen -c $< -o $@
$(BUILD)/libgrove_cuda.so: $(BUILD)/cuda/backend.o src/device/cuda/cuda.map
	$(CC) -shared $(SANITIZE) -Wl,--version-script=src/device/cuda/cuda.map -o $@ $< -ldl

# Files whose results must round the same on every machine (random numbers,
# rotations): no FMA contraction, whatever -march allows.
EXACT_FP_OBJ := $(addprefix $(BUILD)/obj/src/,core/rng.o balltree/rotation.o)
$(EXACT_FP_OBJ): LIB_CFLAGS += -ffp-contract=off

# The ball tree builders with their loops unrolled: their radix passes and
# record loops measured faster so.
BUILDER_OBJ := $(addprefix $(BUILD)/obj/src/balltree/,presorted.o packed.o packed_ranks.o packed_quantized.o \
                                                  packed_bitmask.o selecting.o)
$(BUILDER_OBJ): LIB_CFLAGS += -funroll-loops

$(BUILD)/obj/src/%.o: src/%.c Makefile
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(LIB_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/obj/cli/%.o: cli/%.c Makefile
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

# The MPI test program's cases see the library's internals and MPI.
$(BUILD)/obj/tests/mpi/%.o: tests/mpi/%.c Makefile
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -Isrc/core -Isrc $(OPTIONAL_CFLAGS) -MMD -MP -c $< -o $@

# The tests write HDF5 files with libhdf5 itself where grove has it.
$(BUILD)/obj/tests/%.o: tests/%.c Makefile
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -Isrc/core -Isrc $(HDF5_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/libgrove.a: $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/libgrove.so: $(LIB_OBJ) src/grove.map
	$(CC) -shared -fopenmp $(SANITIZE) -Wl,--version-script=src/grove.map -o $@ $(LIB_OBJ) $(LDLIBS)

HDF5_OBJ := $(HDF5_PART:%.c=$(BUILD)/obj/%.o)
$(BUILD)/libgrove_hdf5.so: $(HDF5_OBJ) src/io/hdf5_plugin.map
	$(CC) -shared $(SANITIZE) -Wl,--version-script=src/io/hdf5_plugin.map -o $@ $(HDF5_OBJ) $(HDF5_LIBS)

$(BUILD)/grove: $(CLI_OBJ) $(BUILD)/libgrove.a
	$(CC) -fopenmp $(SANITIZE) -o $@ $(CLI_OBJ) $(BUILD)/libgrove.a $(LDLIBS)

$(BUILD)/test_grove: $(TEST_OBJ) $(BUILD)/libgrove.a
	$(CC) -fopenmp $(SANITIZE) -o $@ $(TEST_OBJ) $(BUILD)/libgrove.a $(LDLIBS) $(HDF5_LIBS)

$(BUILD)/test_mpi: $(MPI_TEST_OBJ) $(BUILD)/libgrove.a
	$(CC) -fopenmp $(SANITIZE) -o $@ $(MPI_TEST_OBJ) $(BUILD)/libgrove.a $(LDLIBS)
# Built for make check when the MPI part is (tests/test_mpi.c runs it).
MPI_TEST_BIN := $(if $(HAVE_MPI),$(BUILD)/test_mpi)

# What the tests need to find: the CLI, the libraries, the compiler, the
# MPI test program.
# LONG=1 runs the long tests too (TEST_LONG in tests/test.h; make check-all).
LONG ?= 0
TEST_ENV = GROVE_CLI=$(BUILD)/grove GROVE_LIB_SO=$(BUILD)/libgrove.so GROVE_LIB_A=$(BUILD)/libgrove.a GROVE_CC="$(CC)" GROVE_SANITIZE="$(SANITIZE)" \
           GROVE_TESTS_LONG=$(LONG) \
           GROVE_TEST_MPI=$(BUILD)/test_mpi

# The ball tree tests run three times more: with working memory in huge
# pages, with the code an AVX2 machine runs (GROVE_CPU=avx2), and with the
# portable code only (GROVE_CPU=portable: the same bytes as the vector code
# picked at run time, which the main run takes where the machine has it);
# the pair count tests twice more, for their x86-64-v3 and portable kernels.
# The last run's GROVE_TESTS_SKIPPED is check-python's note when it skipped
# the Python tests: the runner prints it just above its closing line.
TEST_RUN = $(BUILD)/test_grove
check: all $(BUILD)/test_grove $(MPI_TEST_BIN)
	$(TEST_ENV) GROVE_HUGE_PAGES=1 $(TEST_RUN) alloc_huge balltree
	$(TEST_ENV) GROVE_CPU=avx2 $(TEST_RUN) balltree paircount
	$(TEST_ENV) GROVE_CPU=portable $(TEST_RUN) balltree paircount
	$(TEST_ENV) GROVE_TESTS_SKIPPED="$$(cat $(PYTHON_SKIPPED) 2>/dev/null)" $(TEST_RUN) $(TESTS)

# The Python binding's tests (tests/python, pytest) against this build's
# libgrove.so and grove, when $(PYTHON) has NumPy and pytest (make check
# PYTHON=/path/to/python picks another). A prerequisite of check, so they
# run before the C runner and its "N passed, N failed" stays the last line.
# Skipped for sanitizer builds (Python cannot load them). A skip is said
# here and, through $(PYTHON_SKIPPED), again above the runner's closing line.
PYTHON ?= python3
PYTHON_SKIPPED = $(BUILD)/python-tests-skipped
check-python: all
	@rm -f $(PYTHON_SKIPPED); \
	if [ -n "$(SANITIZE)" ]; then why="sanitizer build (Python cannot load it)"; \
	elif ! $(PYTHON) -c "import numpy, pytest" 2>/dev/null; then \
	    why="$(PYTHON) cannot import numpy and pytest (pip install numpy pytest, or make check PYTHON=...)"; \
	fi; \
	if [ -n "$$why" ]; then echo "check-python: skipped: $$why"; echo "Python tests skipped: $$why" > $(PYTHON_SKIPPED); \
	else GROVE_LIB=$(abspath $(BUILD))/libgrove.so GROVE_CLI=$(abspath $(BUILD))/grove GROVE_CC="$(CC)" \
	    PYTHONPATH=$(CURDIR)/python PYTHONDONTWRITEBYTECODE=1 $(PYTHON) -m pytest -q -p no:cacheprovider tests/python; fi
check: check-python
.PHONY: check-python

check-all:
	$(MAKE) check LONG=1

# For every AddressSanitizer run (check-asan, fuzz). intercept_tls_get_addr=0:
# the __tls_get_addr interceptor of clang 14's runtime takes a dynamic TLS
# block (libgomp's) that happens to start 16 bytes into a page for a
# pre-2.25 glibc header, and LeakSanitizer's tracer then crashes at exit,
# on every run of that memory layout (LLVM D147459).
ASAN_ENV = ASAN_OPTIONS="intercept_tls_get_addr=0$${ASAN_OPTIONS:+:$$ASAN_OPTIONS}"
check-asan:
	$(ASAN_ENV) $(MAKE) check BUILD=build-asan CC=clang OPT=-O1 \
	    SANITIZE="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"

# Memory errors and definite leaks under valgrind (libgomp's thread stacks
# show as "possibly lost" and are not errors).
check-valgrind: all $(BUILD)/test_grove
	$(TEST_ENV) valgrind -q --error-exitcode=9 --leak-check=full --errors-for-leak-kinds=definite --show-possibly-lost=no \
	    $(BUILD)/test_grove $(TESTS)

# The device kernels under oclgrind (an OpenCL device simulator that
# checks every work-item): data races and out-of-bounds accesses (and
# misuse of the API), on the tiny inputs of the device_*_tiny tests;
# fails on any report. Needs oclgrind (Debian: oclgrind) and the OpenCL
# part. Its experimental --uninitialized check is left out: it takes nine
# minutes here and reports values that kernels wrote to global memory for
# later kernels (the join's candidate lists) as uninitialised, which
# buffers filled with junk at allocation show they are not.
OCLGRIND ?= oclgrind
check-oclgrind: all $(BUILD)/test_grove
	@command -v $(OCLGRIND) >/dev/null || { echo "check-oclgrind: $(OCLGRIND) not found (Debian: apt-get install oclgrind)"; exit 1; }
	@test -n "$(HAVE_OPENCL)" || { echo "check-oclgrind: this build has no OpenCL part (no CL/cl.h)"; exit 1; }
	@rm -f $(BUILD)/oclgrind.log
	$(TEST_ENV) $(OCLGRIND) --data-races --check-api --log $(BUILD)/oclgrind.log $(BUILD)/test_grove device_join_tiny device_gravity_tiny
	@if [ -s $(BUILD)/oclgrind.log ]; then head -n 60 $(BUILD)/oclgrind.log; echo "check-oclgrind: oclgrind reported the above ($(BUILD)/oclgrind.log)"; exit 1; fi
	@echo "check-oclgrind: no data races or out-of-bounds accesses"

# The CUDA kernels compiled for every architecture, failing on spills or
# registers above the budget tests/device/check_cuda.sh states.
check-cuda:
	@test -n "$(NVCC)" || { echo "check-cuda: nvcc not found (CUDA_HOME=$(CUDA_HOME))"; exit 1; }
	sh tests/device/check_cuda.sh $(NVCC) $(BUILD)/cuda-check $(CUDA_ARCHS)

demo: all
	@sh scripts/demo.sh $(BUILD)/grove

FUZZ_TARGETS := $(patsubst fuzz/%.c,%,$(wildcard fuzz/fuzz_*.c))
fuzz:
	@mkdir -p build-fuzz
	@for t in $(FUZZ_TARGETS); do \
	    echo "fuzz: $$t for $(FUZZ_SECONDS) s"; \
	    clang -g -O1 -std=c11 -D_POSIX_C_SOURCE=200809L -fopenmp -fsanitize=fuzzer,address,undefined \
	        -fno-sanitize-recover=all -Iinclude -Isrc/core fuzz/$$t.c $(FUZZ_SRC) -o build-fuzz/$$t -lm || exit 1; \
	    mkdir -p build-fuzz/corpus-$$t; \
	    $(ASAN_ENV) build-fuzz/$$t -max_total_time=$(FUZZ_SECONDS) -max_len=4096 -rss_limit_mb=1024 -print_final_stats=1 \
	        build-fuzz/corpus-$$t fuzz/corpus/$$t > build-fuzz/$$t.log 2>&1 \
	        || { tail -n 40 build-fuzz/$$t.log; exit 1; }; \
	    grep -E 'stat::number_of_executed_units' build-fuzz/$$t.log; \
	done

# The version has one home, grove.h; the .pc file, the package metadata
# (python/setup.py) and `grove info` all read it from there.
VERSION := $(shell sed -n 's/^\#define GROVE_VERSION_STRING "\(.*\)"/\1/p' include/grove.h)
PC_FILE = sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' -e 's|@LIBS@|$(OPTIONAL_LIBS)|' grove.pc.in
$(BUILD)/grove.pc: grove.pc.in include/grove.h
	$(Q)mkdir -p $(@D)
	$(Q)$(PC_FILE) > $@

install: all
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/bin
	install -m 644 include/grove.h $(DESTDIR)$(PREFIX)/include/grove.h
	$(if $(HAVE_MPI),install -m 644 include/grove_mpi.h $(DESTDIR)$(PREFIX)/include/grove_mpi.h)
	install -m 644 $(BUILD)/libgrove.a $(DESTDIR)$(PREFIX)/lib/libgrove.a
	install -m 755 $(BUILD)/libgrove.so $(DESTDIR)$(PREFIX)/lib/libgrove.so
	$(if $(HAVE_CUDA),install -m 755 $(BUILD)/libgrove_cuda.so $(DESTDIR)$(PREFIX)/lib/libgrove_cuda.so)
	$(if $(HAVE_HDF5),install -m 755 $(BUILD)/libgrove_hdf5.so $(DESTDIR)$(PREFIX)/lib/libgrove_hdf5.so)
	$(PC_FILE) > $(DESTDIR)$(PREFIX)/lib/pkgconfig/grove.pc
	install -m 755 $(BUILD)/grove $(DESTDIR)$(PREFIX)/bin/grove

# Builds in its own venv, build/dist-venv, made from $(PYTHON) (scripts/dist.sh).
dist:
	PYTHON=$(PYTHON) sh scripts/dist.sh

clean:
	rm -rf build build-asan build-fuzz

.PHONY: all check check-all check-asan check-valgrind check-oclgrind check-cuda demo fuzz install dist clean
-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(MPI_TEST_OBJ:.o=.d)
