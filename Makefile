# Build, test, format and lint Iron. `make test` is what CI runs (see .ci/run).
BUILD_DIR := build
FORMAT_FILES = $(shell find include src kernels probe examples cli tests python -name '*.cpp' -o -name '*.hpp')
TIDY_FILES = $(shell find src cli kernels python -name '*.cpp')

.PHONY: build test iron-test bench fmt fmt-check tidy clean

build:
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build $(BUILD_DIR)

test: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j2

iron-test: build
	$(BUILD_DIR)/iron test

# On a GPU machine with PyTorch and Triton: every bench, the peers, and the report in bench/results.
bench:
	scripts/gpu_bench.sh

fmt:
	clang-format -i $(FORMAT_FILES)

fmt-check:
	clang-format --dry-run -Werror $(FORMAT_FILES)

tidy: build
	clang-tidy -p $(BUILD_DIR) $(TIDY_FILES)

clean:
	rm -rf $(BUILD_DIR)
