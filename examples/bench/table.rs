//! The benchmark's table: per mode, each client's median rate and umcp's ratios to the others.

use crate::{median, rmcp, Sample};

/// Prints one row per mode. `samples[mode]` holds the bare client's, umcp's and rmcp's runs, in
/// that order (rmcp's empty when it was not included). Each ratio is the median of the ratios
/// of runs made one after the other, so that a slower stretch of the machine hits both sides.
pub fn print(modes: &[(&str, usize, crate::Placement)], samples: &[[Vec<Sample>; 3]]) {
    let with_rmcp = samples.iter().all(|s| !s[2].is_empty());
    println!(
        "{:<26} {:>9} {:>9} {:>9} {:>9} {:>9} {:>17} {:>18} {:>19}",
        "median of 7",
        "bare/s",
        "umcp/s",
        "rmcp/s",
        "umcp÷bare",
        "umcp÷rmcp",
        "ctx/call",
        "allocs/call",
        "CPU µs/call"
    );
    println!(
        "{:>94} {:>18} {:>19}",
        "umcp (bare, rmcp)", "umcp (bare, rmcp)", "umcp (bare, rmcp)"
    );
    for (m, (label, _, _)) in modes.iter().enumerate() {
        let [bare, umcp, rmcp] = &samples[m];
        let rate = |s: &[Sample]| median(s.iter().map(|s| s.rate));
        let ratio = |other: &[Sample]| median(other.iter().zip(umcp).map(|(o, u)| u.rate / o.rate));
        let per = |s: &[Sample], f: fn(&Sample) -> f64| median(s.iter().map(f));
        // Dashes where rmcp was not run.
        let or_dash = |text: String| if with_rmcp { text } else { "-".to_owned() };
        let three = |f: fn(&Sample) -> f64| {
            let rmcp = or_dash(format!("{:.1}", per(rmcp, f)));
            format!("{:.1} ({:.1}, {rmcp})", per(umcp, f), per(bare, f))
        };
        let ctx = three(|s| s.ctx);
        println!(
            "{label:<26} {:>9.0} {:>9.0} {:>9} {:>9.2} {:>9} {ctx:>17} {:>18} {:>19}",
            rate(bare),
            rate(umcp),
            or_dash(format!("{:.0}", rate(rmcp))),
            ratio(bare),
            or_dash(format!("{:.2}", ratio(rmcp))),
            three(|s| s.allocs),
            three(|s| s.cpu),
        );
    }
    scaling(modes, samples, with_rmcp);
    if !with_rmcp {
        println!(
            "rmcp not included: {}=<the binary .ci/rmcp-baseline builds> adds it; \
             `bash .ci/bench` builds it and runs this with it",
            rmcp::VARIABLE
        );
    }
}

/// For each mode with several threads: its rate over the sequential rate with the same
/// placement, per client, and how busy client and server kept the cores. Calls cannot go
/// faster than the cores run client and server, so "CPU busy" (rate × CPU time per call ÷
/// cores) says how far from that ceiling a client stayed. The whole machine's busy share, from
/// `/proc/stat`, is shown beside it: when the two are close, nothing else took the cores.
fn scaling(modes: &[(&str, usize, crate::Placement)], samples: &[[Vec<Sample>; 3]], rmcp: bool) {
    let cores = crate::cores() as f64;
    let clients: &[(&str, usize)] = if rmcp {
        &[("umcp", 1), ("bare", 0), ("rmcp", 2)]
    } else {
        &[("umcp", 1), ("bare", 0)]
    };
    for (m, &(label, threads, placement)) in modes.iter().enumerate() {
        let sequential = modes.iter().position(|&(_, t, p)| t == 1 && p == placement);
        let Some(seq) = sequential.filter(|_| threads > 1) else {
            continue;
        };
        let rate = |m: usize, k: usize| median(samples[m][k].iter().map(|s| s.rate));
        let busy = |k: usize| {
            let busy = samples[m][k].iter().map(|s| s.rate * s.cpu / 1e6 / cores);
            median(busy) * 100.0
        };
        let machine = |k: usize| median(samples[m][k].iter().map(|s| s.machine)) * 100.0;
        let each = |f: &dyn Fn(usize) -> String| {
            let parts: Vec<String> = clients
                .iter()
                .map(|&(name, k)| format!("{name} {}", f(k)))
                .collect();
            parts.join(", ")
        };
        println!(
            "{label} ÷ sequential: {}; CPU busy: {}",
            each(&|k| format!("{:.2}×", rate(m, k) / rate(seq, k))),
            each(&|k| format!("{:.0} % (machine {:.0} %)", busy(k), machine(k)))
        );
    }
}
