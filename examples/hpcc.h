/*
 * HPCC RandomAccess's random stream (x^63 + x^2 + x + 1 over GF(2)), shared
 * by the gups example and the GUPS benchmarks so that every variant makes
 * exactly the same updates.
 */
#ifndef DART_EXAMPLES_HPCC_H_
#define DART_EXAMPLES_HPCC_H_

#include <stdint.h>

#define HPCC_POLY UINT64_C(0x7)
#define HPCC_PERIOD INT64_C(1317624576693539401)

/* The next element of the stream. */
static inline uint64_t hpcc_next(uint64_t ran)
{
  return (ran << 1) ^ ((int64_t)ran < 0 ? HPCC_POLY : 0);
}

/* HPCC_starts: element n of the stream, in O(log n). */
static inline uint64_t hpcc_starts(int64_t n)
{
  uint64_t m2[64];
  while (n < 0) n += HPCC_PERIOD;
  while (n > HPCC_PERIOD) n -= HPCC_PERIOD;
  if (n == 0) return 1;
  uint64_t temp = 1;
  for (int i = 0; i < 64; i++) {
    m2[i] = temp;
    temp = hpcc_next(hpcc_next(temp));
  }
  int i;
  for (i = 62; i >= 0; i--)
    if ((n >> i) & 1) break;
  uint64_t ran = 2;
  while (i > 0) {
    temp = 0;
    for (int j = 0; j < 64; j++)
      if ((ran >> j) & 1) temp ^= m2[j];
    ran = temp;
    i -= 1;
    if ((n >> i) & 1) ran = hpcc_next(ran);
  }
  return ran;
}

/* Unit me's stretch of a stream of total updates shared by units. */
static inline void hpcc_stretch(uint64_t total, int me, int units,
                                uint64_t *first, uint64_t *count)
{
  uint64_t u = (uint64_t)units, m = (uint64_t)me, rest = total % u;
  *first = total / u * m + (m < rest ? m : rest);
  *count = total / u + (m < rest ? 1 : 0);
}

#endif
