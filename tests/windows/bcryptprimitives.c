/* bcryptprimitives.dll for Wine 8.0, which lacks it: the Rust standard library (1.78 and
 * later) imports ProcessPrng from it for its random seeds (HashMap keys and the like), so no
 * Rust .exe starts without it. This stub exports ProcessPrng on top of RtlGenRandom
 * (advapi32's SystemFunction036), which Wine has. Built with mingw-w64 by the Windows suite
 * (tests/src/windows.rs) and put beside the .exe files; a real Windows has the real DLL.
 *
 *   x86_64-w64-mingw32-gcc -shared -O2 -s -o bcryptprimitives.dll bcryptprimitives.c -ladvapi32
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

/* Fill `data` with `len` random bytes; TRUE, as the real one always returns. */
__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    while (len > 0) {
        ULONG chunk = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
