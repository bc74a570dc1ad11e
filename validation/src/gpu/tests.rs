//! Unit tests of the GPU check on nvidia-smi output samples.
//!
//! The samples follow the CSV format that `nvidia-smi --help-query-gpu` documents for
//! `--format=csv,noheader,nounits` (one line per GPU, fields in query order separated by ", ", memory.total in MiB
//! without the " MiB" unit, "[N/A]" or "[Not Supported]" for a value the device does not report); the product
//! names and memory totals are those nvidia-smi prints for these cards (H100 80GB HBM3: 81559 MiB, the figure the
//! 80gi class is built on; Tesla T4: 15360 MiB; L4: 23034 MiB). They are written for this test, not captured here:
//! this machine has no GPU.

use super::*;

const DGX_H100: &str = "\
0, NVIDIA H100 80GB HBM3, 81559
1, NVIDIA H100 80GB HBM3, 81559
2, NVIDIA H100 80GB HBM3, 81559
3, NVIDIA H100 80GB HBM3, 81559
4, NVIDIA H100 80GB HBM3, 81559
5, NVIDIA H100 80GB HBM3, 81559
6, NVIDIA H100 80GB HBM3, 81559
7, NVIDIA H100 80GB HBM3, 81559
";
const ONE_T4: &str = "0, Tesla T4, 15360\n";
const TWO_L4: &str = "0, NVIDIA L4, 23034\n1, NVIDIA L4, 23034\n";
const NOT_AVAILABLE: &str = "0, NVIDIA A100-SXM4-40GB, [N/A]\n";
const WITH_UNITS: &str = "0, Tesla T4, 15360 MiB\n";

fn expect(count: u32, min_memory_mib: u64) -> Expectation {
    Expectation {
        count,
        min_memory_mib,
    }
}

fn names(checks: &[Check]) -> Vec<String> {
    checks.iter().map(ToString::to_string).collect()
}

#[test]
fn parses_documented_samples() {
    let gpus = parse_query_gpu(DGX_H100).unwrap();
    assert_eq!(gpus.len(), 8);
    assert_eq!(
        gpus[7],
        Gpu {
            index: 7,
            name: "NVIDIA H100 80GB HBM3".into(),
            memory_total_mib: 81559
        }
    );
    assert_eq!(parse_query_gpu(ONE_T4).unwrap()[0].name, "Tesla T4");
    assert_eq!(parse_query_gpu(TWO_L4).unwrap()[1].memory_total_mib, 23034);
}

#[test]
fn refuses_what_is_not_the_documented_format() {
    assert_eq!(parse_query_gpu(""), Err(ParseError::Empty));
    assert_eq!(parse_query_gpu("\n\n"), Err(ParseError::Empty));
    assert_eq!(
        parse_query_gpu(NOT_AVAILABLE),
        Err(ParseError::Number {
            line: 1,
            field: "memory.total",
            value: "[N/A]".into()
        })
    );
    assert!(matches!(
        parse_query_gpu(WITH_UNITS),
        Err(ParseError::Number {
            field: "memory.total",
            ..
        })
    ));
    assert!(matches!(
        parse_query_gpu("0, Tesla T4\n"),
        Err(ParseError::Fields { got: 2, .. })
    ));
    // A header line (csv without noheader) is not a GPU.
    assert!(matches!(
        parse_query_gpu("index, name, memory.total [MiB]\n0, Tesla T4, 15360\n"),
        Err(ParseError::Number {
            line: 1,
            field: "index",
            ..
        })
    ));
}

#[test]
fn all_pass_when_count_and_memory_match_the_class() {
    let checks = evaluate(
        Ok(TWO_L4.into()),
        &DeviceEnv::default(),
        expect(2, usable_mib("24gi").unwrap()),
    );
    assert_eq!(
        names(&checks),
        [
            "PASS nvidia-smi: 2 GPU(s) visible: 0 NVIDIA L4 23034 MiB; 1 NVIDIA L4 23034 MiB",
            "PASS device-count: 2 device(s) visible to CUDA, 2 requested",
            "PASS memory: every device has >= 22888 MiB (least: 23034 MiB)",
        ]
    );
}

#[test]
fn memory_exactly_at_the_class_passes_one_mib_less_fails() {
    let at = evaluate(Ok(DGX_H100.into()), &DeviceEnv::default(), expect(8, 81559));
    assert!(at.iter().all(Check::passed), "{at:?}");
    let above = evaluate(Ok(DGX_H100.into()), &DeviceEnv::default(), expect(8, 81560));
    let memory = above.iter().find(|c| c.name == "memory").unwrap();
    assert_eq!(
        memory
            .outcome
            .as_ref()
            .unwrap_err()
            .split("; ")
            .next()
            .unwrap(),
        "GPU 0 (NVIDIA H100 80GB HBM3) has 81559 MiB < 81560 MiB"
    );
}

#[test]
fn a_t4_is_not_a_24gi_card() {
    let checks = evaluate(
        Ok(ONE_T4.into()),
        &DeviceEnv::default(),
        expect(1, usable_mib("24gi").unwrap()),
    );
    assert_eq!(
        names(&checks)[2],
        "FAIL memory: GPU 0 (Tesla T4) has 15360 MiB < 22888 MiB"
    );
}

#[test]
fn count_mismatch_fails() {
    let checks = evaluate(Ok(ONE_T4.into()), &DeviceEnv::default(), expect(2, 1));
    assert_eq!(
        names(&checks)[1],
        "FAIL device-count: 1 device(s) visible to CUDA, 2 requested"
    );
}

#[test]
fn cuda_visible_devices_narrows_the_set_with_cudas_rules() {
    let gpus = parse_query_gpu(DGX_H100).unwrap();
    assert_eq!(cuda_visible(&gpus, None).len(), 8);
    assert_eq!(cuda_visible(&gpus, Some("")).len(), 0);
    assert_eq!(cuda_visible(&gpus, Some("0,3")).len(), 2);
    // CUDA stops at the first entry naming no device: 9 does not exist, so 1 is not reached.
    assert_eq!(cuda_visible(&gpus, Some("0,9,1")).len(), 1);
    assert_eq!(cuda_visible(&gpus, Some("0,0")).len(), 1);
    assert_eq!(
        cuda_visible(&gpus, Some("GPU-5c8e1a2b-0000-0000-0000-000000000000")),
        vec![None]
    );
    let env = DeviceEnv {
        cuda_visible_devices: Some("1".into()),
        nvidia_visible_devices: None,
    };
    let checks = evaluate(Ok(DGX_H100.into()), &env, expect(2, 1));
    assert_eq!(
        names(&checks)[1],
        "FAIL device-count: 1 device(s) visible to CUDA (CUDA_VISIBLE_DEVICES=\"1\"), 2 requested"
    );
}

#[test]
fn nvidia_visible_devices_must_match_the_request() {
    let env = |v: &str| DeviceEnv {
        cuda_visible_devices: None,
        nvidia_visible_devices: Some(v.into()),
    };
    let line = |v: &str| names(&evaluate(Ok(TWO_L4.into()), &env(v), expect(2, 1)))[1].clone();
    assert_eq!(
        line("all"),
        "PASS nvidia-visible-devices: NVIDIA_VISIBLE_DEVICES=all"
    );
    assert_eq!(
        line("GPU-a,GPU-b"),
        "PASS nvidia-visible-devices: NVIDIA_VISIBLE_DEVICES lists 2 device(s)"
    );
    assert_eq!(
        line("0"),
        "FAIL nvidia-visible-devices: NVIDIA_VISIBLE_DEVICES lists 1 device(s), 2 requested"
    );
    assert_eq!(
        line("void"),
        "FAIL nvidia-visible-devices: NVIDIA_VISIBLE_DEVICES=\"void\": the container runtime injects no GPU, 2 requested"
    );
}

#[test]
fn no_nvidia_smi_is_one_clear_failure() {
    let checks = evaluate(
        Err("nvidia-smi not found".into()),
        &DeviceEnv::default(),
        expect(1, 1),
    );
    assert_eq!(names(&checks), ["FAIL nvidia-smi: nvidia-smi not found"]);
    let checks = evaluate(
        Ok(NOT_AVAILABLE.into()),
        &DeviceEnv::default(),
        expect(1, 1),
    );
    assert_eq!(
        names(&checks),
        [
            "FAIL nvidia-smi: cannot read its output: line 1: memory.total is \"[N/A]\", not a whole number"
        ]
    );
}

#[test]
fn missing_program_is_reported_not_panicked() {
    let err = run_nvidia_smi("/nonexistent/nvidia-smi").unwrap_err();
    assert!(
        err.starts_with("/nonexistent/nvidia-smi not found: "),
        "{err}"
    );
}

#[test]
fn class_table_is_the_operators() {
    let ours: Vec<(&str, u64)> = CLASS_USABLE_MIB.to_vec();
    let operator: Vec<(&str, u64)> = model_fleet_api::capacity::CLASSES
        .iter()
        .map(|c| (c.name, c.usable_mib))
        .collect();
    assert_eq!(ours, operator);
    assert_eq!(usable_mib("80gi"), Some(81559));
    assert_eq!(usable_mib("81gi"), None);
}
