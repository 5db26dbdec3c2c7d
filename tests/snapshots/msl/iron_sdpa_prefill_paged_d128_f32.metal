// not emitted for metal3.1: kernel iron_sdpa_prefill_paged_d128: needs 84480 bytes of threadgroup memory, more than the 32768 bytes target metal3.1 allows:
  @shm0: f32[16896] at bytes [0, 67584)
  @shm1: f32[2112] at bytes [67584, 76032)
  @shm2: f32[2112] at bytes [76032, 84480)
