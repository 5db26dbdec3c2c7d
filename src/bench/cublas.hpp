/// cuBLAS loaded with dlopen (never linked): the few functions the bench ceiling calls.
#pragma once

#include <string>

namespace iron::bench {

using CublasHandle = struct cublasContext*;
using CublasStatus = int;  // CUBLAS_STATUS_SUCCESS is 0

/// cudaDataType_t, cublasComputeType_t, cublasGemmAlgo_t and cublasOperation_t values used.
inline constexpr int kCudaR32F = 0;
inline constexpr int kCudaR16F = 2;
inline constexpr int kCudaR16BF = 14;
inline constexpr int kCublasCompute32F = 68;
inline constexpr int kCublasGemmDefault = -1;
inline constexpr int kCublasOpN = 0;
inline constexpr int kCublasOpT = 1;

struct CublasApi {
  CublasStatus (*create)(CublasHandle*) = nullptr;
  CublasStatus (*destroy)(CublasHandle) = nullptr;
  CublasStatus (*gemm_ex)(CublasHandle, int, int, int, int, int, const void*, const void*, int, int,
                          const void*, int, int, const void*, void*, int, int, int, int) = nullptr;
};

/// The process's cuBLAS, searched once: $IRON_LIBCUBLAS, then libcublas.so.13/.12/.so in each
/// CUDA toolkit's lib64, in pip's NVIDIA wheels, and on the loader's own path.
struct Cublas {
  bool available = false;
  std::string path;    ///< the file opened
  std::string reason;  ///< when unavailable: what was tried
  CublasApi api;
};
const Cublas& cublas();

}  // namespace iron::bench
