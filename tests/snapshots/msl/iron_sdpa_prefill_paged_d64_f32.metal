// not emitted for metal3.1: kernel iron_sdpa_prefill_paged_d64: needs 52224 bytes of threadgroup memory, more than the 32768 bytes target metal3.1 allows:
  @shm0: f32[4352] at bytes [0, 17408)
  @shm1: f32[4352] at bytes [17408, 34816)
  @shm2: f32[4352] at bytes [34816, 52224)
