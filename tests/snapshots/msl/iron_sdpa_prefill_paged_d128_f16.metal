// not emitted for metal3.1: kernel iron_sdpa_prefill_paged_d128: needs 49152 bytes of threadgroup memory, more than the 32768 bytes target metal3.1 allows:
  @shm0: f16[16384] at bytes [0, 32768)
  @shm1: f16[4096] at bytes [32768, 40960)
  @shm2: f16[4096] at bytes [40960, 49152)
