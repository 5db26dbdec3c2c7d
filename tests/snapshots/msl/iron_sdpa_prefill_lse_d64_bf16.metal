// not emitted for metal3.1: kernel iron_sdpa_prefill_lse_d64: needs 81920 bytes of threadgroup memory, more than the 32768 bytes target metal3.1 allows:
  @shm0: bf16[8192] at bytes [0, 16384)
  @shm1: bf16[8192] at bytes [16384, 32768)
  @shm2: bf16[8192] at bytes [32768, 49152)
  @shm3: bf16[16384] at bytes [49152, 81920)
