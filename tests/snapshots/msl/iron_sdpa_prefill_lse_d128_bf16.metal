// not emitted for metal3.1: kernel iron_sdpa_prefill_lse_d128: needs 131072 bytes of threadgroup memory, more than the 32768 bytes target metal3.1 allows:
  @shm0: bf16[16384] at bytes [0, 32768)
  @shm1: bf16[16384] at bytes [32768, 65536)
  @shm2: bf16[16384] at bytes [65536, 98304)
  @shm3: bf16[16384] at bytes [98304, 131072)
