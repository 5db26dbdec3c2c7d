// not emitted for metal3.1: kernel iron_sdpa_prefill_d64: needs 69632 bytes of threadgroup memory, more than the 32768 bytes target metal3.1 allows:
  @shm0: f32[8704] at bytes [0, 34816)
  @shm1: f32[4352] at bytes [34816, 52224)
  @shm2: f32[4352] at bytes [52224, 69632)
