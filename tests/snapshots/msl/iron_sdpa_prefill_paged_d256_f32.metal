// not emitted for metal3.1: kernel iron_sdpa_prefill_paged_d256: needs 99840 bytes of threadgroup memory, more than the 32768 bytes target metal3.1 allows:
  @shm0: f32[16640] at bytes [0, 66560)
  @shm1: f32[4160] at bytes [66560, 83200)
  @shm2: f32[4160] at bytes [83200, 99840)
