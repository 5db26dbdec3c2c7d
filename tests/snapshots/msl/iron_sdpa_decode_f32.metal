// not emitted for metal3.1: kernel iron_sdpa_decode: needs 45184 bytes of threadgroup memory, more than the 32768 bytes target metal3.1 allows:
  @shm0: f32[4096] at bytes [0, 16384)
  @shm1: f32[4096] at bytes [16384, 32768)
  @shm2: f32[3072] at bytes [32768, 45056)
  @shm3: f32[32] at bytes [45056, 45184)
