// not emitted for metal3.1: kernel iron_sdpa_prefill_lse_d64: needs 43520 bytes of threadgroup memory, more than the 32768 bytes target metal3.1 allows:
  @shm0: f32[8704] at bytes [0, 34816)
  @shm1: f32[1088] at bytes [34816, 39168)
  @shm2: f32[1088] at bytes [39168, 43520)
