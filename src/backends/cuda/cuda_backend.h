// cuda_backend.h — the cuda backend: a bound def as a polyhedral model
// (poly_model.h), scheduled by isl under a fusion strategy (schedule.h), tiled and mapped to
// blocks and threads (mapping.h), printed as CUDA C (print_cuda.h), then either compiled by
// NVRTC to a cubin for a GPU architecture and launched through the driver API on kDLCUDA
// tensors (nvrtc.h, driver.h), or, with cuda.emulate=1, the same text compiled for the host
// and run on kDLCPU tensors (emulate.h). Knobs: cuda.emulate, cuda.arch, cuda.fusion,
// cuda.tile, cuda.block, cuda.grid (docs/design/cuda-backend.md).
#pragma once

#include "backends/backend.h"

namespace tc::backends::cuda {

const Backend& backend();

}  // namespace tc::backends::cuda
