#!/bin/bash
# //codegen:kernel_image_test: codegen/kernel_image.py check over the committed kernel image (found beside the script,
# in dlmap's own runfiles or a consumer's), with the nvcc the build detected (when it detected one). Arguments: python,
# kernel_image.py, 1|0 (nvcc found), cuda_root=<toolkit root>.
set -euo pipefail
python=$1 script=$2 has_nvcc=$3 cuda_root=${4#cuda_root=}
# $(rootpath) of an external file is external/<repo>/…; without legacy external runfiles it lives at ../<repo>/….
[ -x "$python" ] || python="../${python#external/}"
[ -f "$script" ] || script="../${script#external/}"
nvcc=()
if [ "$has_nvcc" = 1 ]; then
  nvcc=(--nvcc "$cuda_root/bin/nvcc")
fi
exec "$python" "$script" check "${nvcc[@]}"
