#include "htm.h"

#if defined(__x86_64__)
#include <cpuid.h>

/* CPUID leaf 7: EBX bit 11 is RTM, EDX bit 11 RTM_ALWAYS_ABORT (microcode
 * that keeps the instructions but aborts every transaction). */
bool dart__base__htm_supported(void)
{
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  return (ebx & (1u << 11)) != 0 && (edx & (1u << 11)) == 0;
}
#else
bool dart__base__htm_supported(void) { return false; }
#endif
