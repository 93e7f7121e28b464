#!/bin/bash
# //codegen:kernel_image_test: codegen/kernel_image.py check over the committed kernel image, with the nvcc the build
# detected (when it detected one). Arguments: python, kernel_image.py, 1|0 (nvcc found), cuda_root=<toolkit root>.
set -euo pipefail
python=$1 script=$2 has_nvcc=$3 cuda_root=${4#cuda_root=}
nvcc=()
if [ "$has_nvcc" = 1 ]; then
  nvcc=(--nvcc "$cuda_root/bin/nvcc")
fi
exec "$python" "$script" check --dir src/backends/kernels "${nvcc[@]}"
