//! GPUs confined to the job's own (#44, api.md `executor.gpu_devices`).
//! `CUDA_VISIBLE_DEVICES` is advice, and GPU device nodes are usually mode
//! 0666: without more, any job could open every GPU of its node. Each
//! attempt's cgroup therefore refuses (`EPERM`) every character device of
//! a GPU node's major number except its own GPUs' nodes and the control
//! nodes (`nvidiactl`, `nvidia-uvm`, …): with cgroup v2 (alone, or beside
//! v1 controllers) through a BPF device program, as systemd, runc and
//! Slurm's cgroup/v2 do; with v1 alone through `devices.deny`.
//!
//! The program is a few instructions assembled here and loaded with the
//! `bpf` system call: the crates that load BPF want an ELF object built
//! by a separate toolchain, which a dozen comparisons do not justify.

use std::collections::BTreeSet;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// GPU indices looked for on a node (`{index}` = 0..this).
const MAX_INDEX: u32 = 64;

/// Where a node's GPUs and their control nodes are (the settings).
#[derive(Debug, Clone, Default)]
pub struct GpuDevices {
    /// A GPU's node, `{index}` standing for its index (`/dev/nvidia{index}`).
    pub pattern: String,
    /// Nodes every GPU job needs (`/dev/nvidiactl`, `/dev/nvidia-uvm`, …).
    pub control: Vec<PathBuf>,
}

/// What one attempt may open, as (major, minor) of character devices.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeviceRule {
    /// Majors of the host's GPU nodes: a character device of one of these
    /// is refused unless it is in `allowed`.
    pub majors: BTreeSet<u32>,
    pub allowed: BTreeSet<(u32, u32)>,
    /// The host's GPU nodes the attempt may not open (v1 lists them one
    /// by one).
    pub denied: BTreeSet<(u32, u32)>,
}

impl GpuDevices {
    /// The rule for an attempt holding GPUs `own` of this host.
    pub fn rule(&self, own: &[u32]) -> DeviceRule {
        let mut rule = DeviceRule::default();
        if !self.pattern.contains("{index}") {
            return rule;
        }
        for index in 0..MAX_INDEX {
            let Some(dev) = char_device(Path::new(&self.pattern.replace("{index}", &index.to_string()))) else {
                continue;
            };
            rule.majors.insert(dev.0);
            if own.contains(&index) {
                rule.allowed.insert(dev);
            } else {
                rule.denied.insert(dev);
            }
        }
        if !own.is_empty() {
            rule.allowed.extend(self.control.iter().filter_map(|p| char_device(p)));
        }
        // a node named twice (a control node of a GPU's major) stays open
        rule.denied.retain(|d| !rule.allowed.contains(d));
        rule
    }
}

impl DeviceRule {
    /// Nothing to refuse: the host has no GPU node the pattern names.
    pub fn is_empty(&self) -> bool {
        self.majors.is_empty()
    }

    /// `devices.deny` lines for cgroup v1 (one write each).
    pub fn v1_denies(&self) -> Vec<String> {
        self.denied.iter().map(|(major, minor)| format!("c {major}:{minor} rwm")).collect()
    }

    /// The BPF device program: 1 (allow) or 0 (refuse) per access.
    fn program(&self) -> Vec<Insn> {
        enum Jump {
            Allow,
            Deny,
            Skip,
        }
        // r1 → struct bpf_cgroup_dev_ctx { access_type, major, minor }
        let mut code: Vec<(Insn, Option<Jump>)> = vec![
            (Insn::load_u32(2, 0), None),
            (Insn::and(2, 0xffff), None),
            // not a character device (block devices are not GPUs)
            (Insn::jne(2, DEV_CHAR, 0), Some(Jump::Allow)),
            (Insn::load_u32(3, 4), None),
            (Insn::load_u32(4, 8), None),
        ];
        for (major, minor) in &self.allowed {
            code.push((Insn::jne(3, *major, 0), Some(Jump::Skip)));
            code.push((Insn::jeq(4, *minor, 0), Some(Jump::Allow)));
        }
        for major in &self.majors {
            code.push((Insn::jeq(3, *major, 0), Some(Jump::Deny)));
        }
        let allow = code.len();
        let deny = allow + 2;
        let mut out = Vec::with_capacity(code.len() + 4);
        for (pc, (mut insn, jump)) in code.into_iter().enumerate() {
            let target = match jump {
                None => None,
                Some(Jump::Allow) => Some(allow),
                Some(Jump::Deny) => Some(deny),
                Some(Jump::Skip) => Some(pc + 2),
            };
            if let Some(target) = target {
                insn.off = (target - pc - 1) as i16;
            }
            out.push(insn);
        }
        out.extend([Insn::mov(0, 1), Insn::exit(), Insn::mov(0, 0), Insn::exit()]);
        out
    }

    /// Attaches the program to the v2 cgroup `dir` (before any process
    /// joins it); it goes with the cgroup.
    pub fn attach(&self, dir: &Path) -> std::io::Result<()> {
        let program = self.program();
        let prog = bpf::load_device_program(&program)?;
        let cgroup = std::fs::File::open(dir)?;
        bpf::attach_device_program(&cgroup, &prog)
    }
}

fn char_device(path: &Path) -> Option<(u32, u32)> {
    let meta = std::fs::metadata(path).ok()?;
    meta.file_type().is_char_device().then(|| {
        let rdev = meta.rdev();
        (nix::sys::stat::major(rdev) as u32, nix::sys::stat::minor(rdev) as u32)
    })
}

/// `BPF_DEVCG_DEV_CHAR`.
const DEV_CHAR: u32 = 2;

/// One BPF instruction (`struct bpf_insn`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Insn {
    code: u8,
    regs: u8,
    off: i16,
    imm: i32,
}

impl Insn {
    fn new(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> Self {
        Self { code, regs: (src << 4) | dst, off, imm }
    }
    /// `dst = *(u32 *)(r1 + off)` (BPF_LDX | BPF_MEM | BPF_W)
    fn load_u32(dst: u8, off: i16) -> Self {
        Self::new(0x61, dst, 1, off, 0)
    }
    /// `dst &= imm` (BPF_ALU64 | BPF_AND | BPF_K)
    fn and(dst: u8, imm: i32) -> Self {
        Self::new(0x57, dst, 0, 0, imm)
    }
    /// `dst = imm` (BPF_ALU64 | BPF_MOV | BPF_K)
    fn mov(dst: u8, imm: i32) -> Self {
        Self::new(0xb7, dst, 0, 0, imm)
    }
    /// `if dst != imm goto +off` (BPF_JMP | BPF_JNE | BPF_K)
    fn jne(dst: u8, imm: u32, off: i16) -> Self {
        Self::new(0x55, dst, 0, off, imm as i32)
    }
    /// `if dst == imm goto +off` (BPF_JMP | BPF_JEQ | BPF_K)
    fn jeq(dst: u8, imm: u32, off: i16) -> Self {
        Self::new(0x15, dst, 0, off, imm as i32)
    }
    fn exit() -> Self {
        Self::new(0x95, 0, 0, 0, 0)
    }
}

/// The two `bpf(2)` commands, with the kernel's attribute layouts
/// (`linux/bpf.h`; trailing fields the kernel knows are left zero).
mod bpf {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

    use super::Insn;

    const PROG_LOAD: nix::libc::c_long = 5;
    const PROG_ATTACH: nix::libc::c_long = 8;
    const PROG_TYPE_CGROUP_DEVICE: u32 = 15;
    const CGROUP_DEVICE: u32 = 6;
    /// Other programs up the tree (systemd's) still apply; ours adds to them.
    const F_ALLOW_MULTI: u32 = 2;

    #[repr(C)]
    #[derive(Default)]
    struct ProgLoad {
        prog_type: u32,
        insn_cnt: u32,
        insns: u64,
        license: u64,
        log_level: u32,
        log_size: u32,
        log_buf: u64,
        kern_version: u32,
        prog_flags: u32,
        rest: [u64; 12],
    }

    #[repr(C)]
    #[derive(Default)]
    struct ProgAttach {
        target_fd: u32,
        attach_bpf_fd: u32,
        attach_type: u32,
        attach_flags: u32,
        rest: [u64; 4],
    }

    fn call<T>(cmd: nix::libc::c_long, attr: &mut T) -> std::io::Result<nix::libc::c_long> {
        // SAFETY: attr is a live, zero-padded attribute block of the layout
        // `cmd` reads, and its size is passed with it; the pointers inside
        // it outlive the call.
        let rc = unsafe { nix::libc::syscall(nix::libc::SYS_bpf, cmd, attr as *mut T, std::mem::size_of::<T>()) };
        if rc < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(rc)
    }

    pub fn load_device_program(program: &[Insn]) -> std::io::Result<OwnedFd> {
        let license = c"GPL";
        let mut attr = ProgLoad {
            prog_type: PROG_TYPE_CGROUP_DEVICE,
            insn_cnt: program.len() as u32,
            insns: program.as_ptr() as u64,
            license: license.as_ptr() as u64,
            ..Default::default()
        };
        // without a log first: a verifier log longer than its buffer fails
        // the load (ENOSPC) for a program of a dozen GPUs
        let fd = match call(PROG_LOAD, &mut attr) {
            Ok(fd) => fd,
            Err(_) => {
                let mut log = vec![0u8; 1 << 20];
                attr.log_level = 1;
                attr.log_size = log.len() as u32;
                attr.log_buf = log.as_mut_ptr() as u64;
                call(PROG_LOAD, &mut attr).map_err(|e| {
                    let verifier = String::from_utf8_lossy(&log);
                    let tail: String =
                        verifier.trim_matches('\0').lines().rev().take(3).collect::<Vec<_>>().join(" / ");
                    std::io::Error::new(e.kind(), format!("loading the device program: {e}: {tail}"))
                })?
            }
        };
        // SAFETY: the kernel just returned this descriptor, owned by no one else
        Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
    }

    pub fn attach_device_program(cgroup: &impl AsRawFd, prog: &OwnedFd) -> std::io::Result<()> {
        let mut attr = ProgAttach {
            target_fd: cgroup.as_raw_fd() as u32,
            attach_bpf_fd: prog.as_raw_fd() as u32,
            attach_type: CGROUP_DEVICE,
            attach_flags: F_ALLOW_MULTI,
            ..Default::default()
        };
        call(PROG_ATTACH, &mut attr)
            .map(|_| ())
            .map_err(|e| std::io::Error::new(e.kind(), format!("attaching the device program: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(majors: &[u32], allowed: &[(u32, u32)]) -> DeviceRule {
        DeviceRule {
            majors: majors.iter().copied().collect(),
            allowed: allowed.iter().copied().collect(),
            ..Default::default()
        }
    }

    /// Runs the program as the kernel would, on one access.
    fn run(program: &[Insn], kind: u32, major: u32, minor: u32) -> i32 {
        let ctx = [kind | (2 << 16), major, minor];
        let mut regs = [0i64; 5];
        let mut pc = 0usize;
        loop {
            let i = program[pc];
            let (dst, off) = ((i.regs & 0xf) as usize, i.off as isize);
            pc += 1;
            match i.code {
                0x61 => regs[dst] = ctx[(i.off / 4) as usize] as i64,
                0x57 => regs[dst] &= i.imm as i64,
                0xb7 => regs[dst] = i.imm as i64,
                0x55 if regs[dst] != i.imm as u32 as i64 => pc = (pc as isize + off) as usize,
                0x15 if regs[dst] == i.imm as u32 as i64 => pc = (pc as isize + off) as usize,
                0x55 | 0x15 => {}
                0x95 => return regs[0] as i32,
                other => panic!("unknown instruction {other:#x}"),
            }
        }
    }

    #[test]
    fn the_program_refuses_other_gpus_and_nothing_else() {
        // NVIDIA's major; GPU 0 and nvidiactl (195:255) allowed, uvm's own major open
        let program = rule(&[195], &[(195, 0), (195, 255)]).program();
        let cases = [
            ("own GPU", DEV_CHAR, 195, 0, 1),
            ("control node", DEV_CHAR, 195, 255, 1),
            ("another GPU", DEV_CHAR, 195, 1, 0),
            ("a GPU past the inventory", DEV_CHAR, 195, 7, 0),
            ("/dev/null", DEV_CHAR, 1, 3, 1),
            ("a block device of the same major", 1, 195, 1, 1),
            ("minor 0 of another major", DEV_CHAR, 196, 0, 1),
        ];
        for (what, kind, major, minor, want) in cases {
            assert_eq!(run(&program, kind, major, minor), want, "{what}");
        }
        // no GPU at all: every GPU node refused
        let none = rule(&[195], &[]).program();
        assert_eq!(run(&none, DEV_CHAR, 195, 0), 0);
        assert_eq!(run(&none, DEV_CHAR, 5, 0), 1, "/dev/tty");
    }

    #[test]
    fn the_rule_reads_the_nodes_the_pattern_names() {
        let dir = tempfile::tempdir().unwrap();
        // regular files are not devices: a pattern naming them confines nothing
        std::fs::write(dir.path().join("gpu0"), "").unwrap();
        let devices = GpuDevices { pattern: format!("{}/gpu{{index}}", dir.path().display()), control: vec![] };
        assert!(devices.rule(&[0]).is_empty());
        let no_index = GpuDevices { pattern: "/dev/null".into(), control: vec![] };
        assert!(no_index.rule(&[0]).is_empty(), "a pattern without {{index}} names no GPU");
    }

    /// The kernel runs it: a v2 cgroup with the program, a shell in it
    /// (root only, where a v2 hierarchy is writable).
    #[test]
    fn the_kernel_refuses_what_the_program_refuses() {
        let root = ["/sys/fs/cgroup/unified", "/sys/fs/cgroup"]
            .into_iter()
            .map(Path::new)
            .find(|r| r.join("cgroup.procs").exists() && std::fs::read_to_string(r.join("cgroup.controllers")).is_ok());
        let Some(root) = root.filter(|_| nix::unistd::geteuid().is_root()) else { return };
        let dir = root.join(format!("jpu-devices-test-{}", std::process::id()));
        std::fs::create_dir(&dir).unwrap();
        // a node with 64 GPUs and its control nodes loads too
        let many: Vec<(u32, u32)> = (0..64).map(|m| (195, m)).chain([(195, 255), (511, 0), (511, 1)]).collect();
        bpf::load_device_program(&rule(&[195, 511], &many).program()).unwrap();
        // /dev/null (1:3) refused, /dev/zero (1:5) allowed
        rule(&[1], &[(1, 5)]).attach(&dir).unwrap();
        let procs = dir.join("cgroup.procs");
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!(
                "echo $$ > {}; (exec 3</dev/zero) && echo zero-ok; (exec 3</dev/null) 2>&1 || echo null-refused",
                procs.display()
            ))
            .output()
            .unwrap();
        let _ = std::fs::remove_dir(&dir);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("zero-ok") && text.contains("null-refused"), "{text}");
    }
}
