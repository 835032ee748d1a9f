//! The Windows twins of the daemon's Unix-only steps: the named pipe's security (the
//! current user only, as the socket's mode 0600 on Unix), telling the auto-starting client
//! that the daemon is ready (a named event: a detached daemon inherits no pipe to print
//! `ready` on), and waiting for a daemon process to exit (`coordd stop`).

use std::io;
use std::time::Duration;

use windows_sys::Win32::Foundation::{CloseHandle, HANDLE, LocalFree, WAIT_OBJECT_0, WAIT_TIMEOUT};
use windows_sys::Win32::Security::Authorization::ConvertSidToStringSidW;
use windows_sys::Win32::Security::{GetTokenInformation, TOKEN_QUERY, TOKEN_USER, TokenUser};
use windows_sys::Win32::System::Threading::{
    EVENT_MODIFY_STATE, GetCurrentProcess, OpenEventW, OpenProcess, OpenProcessToken, PROCESS_SYNCHRONIZE, SetEvent,
    WaitForSingleObject,
};

/// A handle closed on drop.
struct Owned(HANDLE);

impl Drop for Owned {
    fn drop(&mut self) {
        // SAFETY: the handle was returned open by the API that made it and is closed once.
        unsafe { CloseHandle(self.0) };
    }
}

fn wide(s: &str) -> Vec<u16> {
    s.encode_utf16().chain(std::iter::once(0)).collect()
}

/// Set the named event the auto-starting client waits on (`coordd serve --ready-event`).
pub fn signal_ready(name: &str) -> io::Result<()> {
    let name = wide(name);
    // SAFETY: `name` is a NUL-terminated UTF-16 string that outlives the call.
    let h = unsafe { OpenEventW(EVENT_MODIFY_STATE, 0, name.as_ptr()) };
    if h.is_null() {
        return Err(io::Error::last_os_error());
    }
    let h = Owned(h);
    // SAFETY: `h` is an open event handle with EVENT_MODIFY_STATE access.
    if unsafe { SetEvent(h.0) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Wait until process `pid` has exited, up to `timeout`: `Ok(true)` when it has (or no
/// longer exists), `Ok(false)` on time-out.
pub fn wait_for_process(pid: u32, timeout: Duration) -> io::Result<bool> {
    // SAFETY: plain call; a null handle means there is no such process (any more).
    let h = unsafe { OpenProcess(PROCESS_SYNCHRONIZE, 0, pid) };
    if h.is_null() {
        return Ok(true);
    }
    let h = Owned(h);
    let ms = u32::try_from(timeout.as_millis()).unwrap_or(u32::MAX - 1);
    // SAFETY: `h` is an open process handle with SYNCHRONIZE access.
    match unsafe { WaitForSingleObject(h.0, ms) } {
        WAIT_OBJECT_0 => Ok(true),
        WAIT_TIMEOUT => Ok(false),
        _ => Err(io::Error::last_os_error()),
    }
}

/// The SDDL of the named pipe's security descriptor: protected (no inherited entries),
/// full access for the current user and nobody else.
pub fn pipe_sddl() -> io::Result<String> {
    Ok(format!("D:P(A;;GA;;;{})", current_user_sid()?))
}

/// The current process's user, as a SID string (`S-1-5-21-…`).
fn current_user_sid() -> io::Result<String> {
    let mut token: HANDLE = std::ptr::null_mut();
    // SAFETY: the pseudo-handle of the current process needs no closing; `token` receives
    // a new handle on success.
    if unsafe { OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &mut token) } == 0 {
        return Err(io::Error::last_os_error());
    }
    let token = Owned(token);
    let mut len = 0u32;
    // SAFETY: a size query: no buffer, `len` receives the size needed.
    unsafe { GetTokenInformation(token.0, TokenUser, std::ptr::null_mut(), 0, &mut len) };
    // u64s: aligned for TOKEN_USER.
    let mut buf = vec![0u64; (len as usize).div_ceil(8).max(1)];
    // SAFETY: `buf` holds at least `len` bytes.
    if unsafe { GetTokenInformation(token.0, TokenUser, buf.as_mut_ptr().cast(), len, &mut len) } == 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: on success the buffer starts with a TOKEN_USER whose SID points inside it.
    let sid = unsafe { (*buf.as_ptr().cast::<TOKEN_USER>()).User.Sid };
    let mut text: *mut u16 = std::ptr::null_mut();
    // SAFETY: `sid` is valid while `buf` lives; `text` receives a LocalAlloc'd string.
    if unsafe { ConvertSidToStringSidW(sid, &mut text) } == 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `text` is a NUL-terminated UTF-16 string until freed below.
    let out = unsafe {
        let n = (0..).take_while(|&i| *text.add(i) != 0).count();
        String::from_utf16_lossy(std::slice::from_raw_parts(text, n))
    };
    // SAFETY: allocated by ConvertSidToStringSidW with LocalAlloc, freed once.
    unsafe { LocalFree(text.cast()) };
    Ok(out)
}
