// not emitted for metal3.1: kernel iron_sdpa_prefill_lse_d64: needs 49152 bytes of threadgroup memory, more than the 32768 bytes target metal3.1 allows:
  @shm0: bf16[8192] at bytes [0, 16384)
  @shm1: bf16[4096] at bytes [16384, 24576)
  @shm2: bf16[4096] at bytes [24576, 32768)
  @shm3: bf16[8192] at bytes [32768, 49152)
