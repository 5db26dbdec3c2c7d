// not emitted for metal3.1: kernel iron_sdpa_prefill_lse_d256: needs 147456 bytes of threadgroup memory, more than the 32768 bytes target metal3.1 allows:
  @shm0: bf16[32768] at bytes [0, 65536)
  @shm1: bf16[16384] at bytes [65536, 98304)
  @shm2: bf16[16384] at bytes [98304, 131072)
  @shm3: bf16[8192] at bytes [131072, 147456)
