//! Windows: start the daemon detached from its caller. Rust's `Command` always creates the
//! child with handle inheritance on, so an auto-started `coordd.exe` would inherit every
//! inheritable handle of the caller, among them the pipes a hook's caller (Claude Code,
//! Codex) captures its output through, and that caller would then wait for the daemon to
//! exit. Here the daemon is created with `CreateProcessW` inheriting nothing, with no
//! standard handles, `DETACHED_PROCESS` (no console) and `CREATE_NEW_PROCESS_GROUP` (the
//! caller's Ctrl-C does not reach it); it says it is ready by setting a named event
//! (`coordd serve --ready-event`), which we wait on together with its process handle.

use std::ffi::OsStr;
use std::os::windows::ffi::OsStrExt;
use std::path::Path;
use std::time::Duration;

use windows_sys::Win32::Foundation::{CloseHandle, HANDLE, WAIT_OBJECT_0, WAIT_TIMEOUT};
use windows_sys::Win32::System::Threading::{
    CREATE_NEW_PROCESS_GROUP, CreateEventW, CreateProcessW, DETACHED_PROCESS, GetExitCodeProcess, PROCESS_INFORMATION,
    STARTUPINFOW, WaitForMultipleObjects,
};

/// How a detached start ended.
pub enum Outcome {
    /// The daemon (this pid) set its ready event.
    Ready(u32),
    /// It exited first, with this status.
    Exited(Option<i32>),
    /// Neither happened in time.
    TimedOut,
}

/// A handle closed on drop.
struct Owned(HANDLE);

impl Drop for Owned {
    fn drop(&mut self) {
        // SAFETY: an open handle returned by the API that made it, closed once.
        unsafe { CloseHandle(self.0) };
    }
}

/// Run `bin ARGS --ready-event <name>` detached and wait up to `timeout` for it to be ready.
pub fn start(bin: &Path, args: &[&OsStr], timeout: Duration) -> std::io::Result<Outcome> {
    let nonce = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos();
    let name = format!("Local\\coordd-ready-{}-{nonce}", std::process::id());
    let wide_name: Vec<u16> = name.encode_utf16().chain([0]).collect();
    // SAFETY: a manual-reset event, initially unset, not inheritable; the name outlives the call.
    let event = unsafe { CreateEventW(std::ptr::null(), 1, 0, wide_name.as_ptr()) };
    if event.is_null() {
        return Err(std::io::Error::last_os_error());
    }
    let event = Owned(event);

    let mut line = Vec::new();
    push_arg(&mut line, bin.as_os_str());
    for a in args.iter().copied().chain([OsStr::new("--ready-event"), OsStr::new(&name)]) {
        line.push(u16::from(b' '));
        push_arg(&mut line, a);
    }
    line.push(0);
    let app: Vec<u16> = bin.as_os_str().encode_wide().chain([0]).collect();
    // SAFETY: zeroed plain-data structs are valid; `cb` is set as the API requires.
    let mut si: STARTUPINFOW = unsafe { std::mem::zeroed() };
    si.cb = size_of::<STARTUPINFOW>() as u32;
    // SAFETY: as above.
    let mut pi: PROCESS_INFORMATION = unsafe { std::mem::zeroed() };
    // SAFETY: NUL-terminated application name and (mutable) command line that outlive the
    // call; no inheritance (FALSE), no standard handles (no STARTF_USESTDHANDLES), the
    // caller's environment and directory.
    let ok = unsafe {
        CreateProcessW(
            app.as_ptr(),
            line.as_mut_ptr(),
            std::ptr::null(),
            std::ptr::null(),
            0,
            DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP,
            std::ptr::null(),
            std::ptr::null(),
            &si,
            &mut pi,
        )
    };
    if ok == 0 {
        return Err(std::io::Error::last_os_error());
    }
    let process = Owned(pi.hProcess);
    drop(Owned(pi.hThread));
    let ms = u32::try_from(timeout.as_millis()).unwrap_or(u32::MAX - 1);
    let handles = [event.0, process.0];
    // SAFETY: two open handles, waiting for either.
    let woke = unsafe { WaitForMultipleObjects(2, handles.as_ptr(), 0, ms) };
    Ok(match woke {
        WAIT_OBJECT_0 => Outcome::Ready(pi.dwProcessId),
        w if w == WAIT_OBJECT_0 + 1 => {
            let mut code = 0u32;
            // SAFETY: an open process handle that has exited.
            let got = unsafe { GetExitCodeProcess(process.0, &mut code) } != 0;
            Outcome::Exited(got.then_some(code as i32))
        }
        WAIT_TIMEOUT => Outcome::TimedOut,
        _ => return Err(std::io::Error::last_os_error()),
    })
}

/// Append one argument to a command line, quoted the way the C runtime (and Rust's
/// `std::env::args`) splits it: quotes when it holds blanks or quotes, backslashes doubled
/// before a quote and at the end.
fn push_arg(line: &mut Vec<u16>, arg: &OsStr) {
    const QUOTE: u16 = b'"' as u16;
    const BACKSLASH: u16 = b'\\' as u16;
    let chars: Vec<u16> = arg.encode_wide().collect();
    let plain =
        !chars.is_empty() && !chars.iter().any(|&c| c == u16::from(b' ') || c == u16::from(b'\t') || c == QUOTE);
    if plain {
        line.extend(chars);
        return;
    }
    line.push(QUOTE);
    let mut backslashes = 0;
    for c in chars {
        if c == BACKSLASH {
            backslashes += 1;
        } else {
            if c == QUOTE {
                line.extend(std::iter::repeat_n(BACKSLASH, backslashes + 1));
            }
            backslashes = 0;
        }
        line.push(c);
    }
    line.extend(std::iter::repeat_n(BACKSLASH, backslashes));
    line.push(QUOTE);
}
