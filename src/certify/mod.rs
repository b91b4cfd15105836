//! Certification of a backend: run every case applicable to what the backend claims, write the
//! reports of `opconform run` plus a certificate, and optionally compare with a baseline of
//! known failures.
//!
//! [`certify_backend`] works on any [`Backend`]: a bundled one, an out-of-process one
//! ([`crate::protocol::ProcessBackend`]) or a third party's Rust implementation.
//!
//! - [`certificate`]: the [`Certificate`] (per operator: highest level passed, what blocks the
//!   next one, counts) and its JSON and Markdown forms;
//! - [`baseline`]: known failures with reasons, and the comparison of a run with them.
//!
//! The report folder is written as a whole ([`crate::report::folder`]); results are appended
//! to its `results.partial.jsonl` as they arrive.

pub mod baseline;
pub mod certificate;
pub mod verify;

pub use baseline::{Baseline, BaselineComparison, ExpectedFailure, NewFailure};
pub use certificate::{BlockingCase, Certificate, OperatorCertificate};

use crate::case::Case;
use crate::report::folder::{Committed, FolderError, ReportFolder};
use crate::report::rows::CaseRecord;
use crate::report::timing::CaseTimer;
use crate::report::{self, RunMeta, RunReport};
use crate::runner::{run_cases, CaseResult};
use crate::selection::{case_set_digest, CasePick};
use opconform_backend::{Backend, BackendInfo, Level, SpecFamily};
use std::collections::BTreeMap;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// The certificate files written beside the reports.
pub const CERTIFICATE_FILES: [&str; 2] = ["certificate.json", "certificate.md"];

/// How to certify.
#[derive(Debug, Clone, Default)]
pub struct CertifyOptions {
    /// The DirectML feature level to certify; `None` takes the backend's DirectML claim. The
    /// OpenVINO target is always the backend's opset claim.
    pub feature_level: Option<Level>,
    /// The user's pick of cases (filters, skips, case list); the certificate then covers only
    /// them, and the suite digest names them.
    pub pick: CasePick,
    /// Threads running cases (at least 1). Cases through one out-of-process backend are
    /// serialised anyway, so 1 is right there.
    pub jobs: usize,
    /// Where to write the reports and the certificate; `None` writes nothing. The folder is
    /// locked for the run and replaced as a whole at its end; results are appended to
    /// `results.partial.jsonl` there while the run goes on.
    pub report_dir: Option<PathBuf>,
    /// Known failures to compare with, and the name to show for them (e.g. the file path).
    pub baseline: Option<(String, Baseline)>,
}

/// The outcome of [`certify_backend`].
#[derive(Debug, Clone)]
pub struct Certification {
    /// What ran (as in `run.json`).
    pub meta: RunMeta,
    /// Every result, sorted by id.
    pub results: Vec<CaseResult>,
    /// Per case: tags, time, verdict (baselined failures with the baseline's reason).
    pub records: BTreeMap<String, CaseRecord>,
    /// The certificate.
    pub certificate: Certificate,
    /// Cases (matching the filter) left out as not applicable: of operators the backend does
    /// not implement, of a family it claims no level of, or above the target.
    pub not_applicable: usize,
    /// True when the run was stopped (SIGINT, SIGTERM) before every applicable case ran.
    pub interrupted: bool,
    /// Where the results of a killed earlier run (its `results.partial.jsonl`) were moved.
    pub rescued: Option<PathBuf>,
    /// Where this run's results were kept because it was interrupted.
    pub interrupted_file: Option<PathBuf>,
    /// The first error met appending to `results.partial.jsonl` (the final reports were
    /// written all the same).
    pub partial_error: Option<String>,
}

impl Certification {
    /// True when the run succeeds: it ran to the end, and with a baseline there is no new
    /// failure; without one, the backend certifies at its targets.
    pub fn succeeded(&self) -> bool {
        !self.interrupted
            && match &self.certificate.baseline {
                Some(comparison) => comparison.is_clean(),
                None => self.certificate.certified,
            }
    }

    /// The reports of `opconform run` for this certification.
    pub fn report(&self) -> RunReport {
        RunReport::new(
            self.meta.clone(),
            self.results.clone(),
            Vec::new(),
            self.records.clone(),
        )
    }
}

/// Why a certification could not run or its reports could not be written.
#[derive(Debug)]
pub enum CertifyError {
    /// The options do not fit the backend (a feature level that is not a DirectML level, a
    /// baseline for another backend), or they select no case.
    Usage(String),
    /// The report folder could not be used or written (another run holds it, it holds other
    /// files, the operating system refused).
    Folder(FolderError),
}

impl fmt::Display for CertifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CertifyError::Usage(message) => f.write_str(message),
            CertifyError::Folder(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for CertifyError {}

/// The levels to certify against: the DirectML `feature_level` (or the backend's DirectML
/// claim) and the backend's OpenVINO claim, each where there is one.
pub fn targets(
    info: &BackendInfo,
    feature_level: Option<Level>,
) -> Result<Vec<Level>, CertifyError> {
    let mut targets = Vec::new();
    match feature_level {
        Some(level) if level.family() != SpecFamily::Directml => {
            return Err(CertifyError::Usage(format!(
                "--feature-level {level} is not a DirectML feature level (the OpenVINO target is \
                 the backend's opset claim)"
            )))
        }
        Some(level) => targets.push(level),
        None => targets.extend(
            info.claims
                .iter()
                .copied()
                .filter(|c| c.family() == SpecFamily::Directml),
        ),
    }
    targets.extend(
        info.claims
            .iter()
            .copied()
            .filter(|c| c.family() == SpecFamily::Openvino),
    );
    Ok(targets)
}

/// True when `case` is applicable to a backend described by `info` certified at `targets`:
/// picked by the user, of an operator it implements, at a level of a targeted family at or
/// below the target.
pub fn is_applicable(case: &Case, info: &BackendInfo, targets: &[Level], pick: &CasePick) -> bool {
    pick.picks(case)
        && info.operators.contains(&case.kind())
        && certificate::target_for(targets, case.level.family())
            .is_some_and(|t| t.at_least(case.level))
}

/// Certifies `backend` on the applicable ones of `cases` (sorted by id): runs them with
/// `options.jobs` threads, calling `progress` after each case, builds the certificate,
/// compares with the baseline, and writes the reports of `opconform run` and
/// `certificate.json` / `certificate.md` into `options.report_dir` if given (locked during the
/// run, results appended as they come, replaced as a whole at the end). When the run is
/// interrupted ([`crate::interrupt::requested`]) the certification covers the cases that ran,
/// certifies nothing, and its results are also kept as `results.interrupted[.N].jsonl`.
///
/// ```no_run
/// use opconform::certify::{certify_backend, CertifyOptions};
/// # fn demo(backend: &dyn opconform_backend::Backend) {
/// let cases = opconform::case::load_paths(&["cases".into()]).cases;
/// let options = CertifyOptions { jobs: 4, report_dir: Some("reports/mine".into()), ..Default::default() };
/// let certification = certify_backend(backend, cases, &options, &|_| {}).unwrap();
/// assert!(certification.certificate.certified);
/// # }
/// ```
pub fn certify_backend(
    backend: &dyn Backend,
    cases: Vec<Case>,
    options: &CertifyOptions,
    progress: &(dyn Fn(&CaseResult) + Sync),
) -> Result<Certification, CertifyError> {
    let info = backend.info();
    let targets = targets(&info, options.feature_level)?;
    if let Some((label, baseline)) = &options.baseline {
        if baseline.backend != info.name {
            return Err(CertifyError::Usage(format!(
                "the baseline {label} is for backend `{}`; this backend is `{}`",
                baseline.backend, info.name
            )));
        }
    }
    // The suite is what the user picked, whatever the backend claims: its digest is the same
    // for every backend certified on it.
    let suite = options.pick.apply(cases);
    let digest = case_set_digest(&suite);
    let considered = suite.len();
    let cases: Vec<Case> = suite
        .into_iter()
        .filter(|c| is_applicable(c, &info, &targets, &options.pick))
        .collect();
    if cases.is_empty() {
        return Err(CertifyError::Usage(format!(
            "no case selected: of {considered} picked case(s) none is applicable to {} at {} \
             (its operators and claims); nothing ran",
            info.name,
            targets
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(" and ")
        )));
    }
    let not_applicable = considered - cases.len();
    let mut folder = match &options.report_dir {
        Some(dir) => {
            let mut folder = ReportFolder::open(dir).map_err(CertifyError::Folder)?;
            folder.start_partial().map_err(CertifyError::Folder)?;
            Some(folder)
        }
        None => None,
    };
    let rescued = folder
        .as_ref()
        .and_then(|f| f.rescued().map(Path::to_path_buf));
    let timer = CaseTimer::new();
    let record = |result: &CaseResult| {
        timer.finished(&result.id);
        if let Some(folder) = &folder {
            folder.append(result);
        }
        progress(result);
    };
    let mut results = run_cases(backend, &cases, options.jobs.max(1), &record);
    let interrupted = crate::interrupt::requested() || results.len() < cases.len();
    results.sort_by(|a, b| a.id.cmp(&b.id));

    let harness_version = env!("CARGO_PKG_VERSION");
    let mut records = report::case_records(&cases, &timer.into_times());
    if let Some((_, baseline)) = &options.baseline {
        for result in &results {
            if let Some(reason) = baseline.expects(result) {
                records
                    .entry(result.id.clone())
                    .or_default()
                    .baseline_reason = Some(reason.to_string());
            }
        }
    }
    let meta = RunMeta {
        harness_version: harness_version.to_string(),
        backend: info.clone(),
        feature_level: certificate::target_for(&targets, SpecFamily::Directml)
            .or_else(|| targets.first().copied())
            .unwrap_or(Level::dml(0x1000)),
        targets: targets.clone(),
        case_set_digest: digest.clone(),
        results_digest: String::new(),
        selection: options.pick.record(),
        case_count: cases.len(),
        shard: None,
        interrupted,
    };
    let report = RunReport::new(meta, results, Vec::new(), records);
    let (meta, results, records) = (report.meta, report.results, report.records);
    let mut certificate = Certificate::build(harness_version, &info, &targets, &digest, &results);
    certificate.results_digest = meta.results_digest.clone();
    certificate.baseline = options
        .baseline
        .as_ref()
        .map(|(label, baseline)| baseline.compare(label, &results));
    if interrupted {
        certificate.mark_interrupted();
    }
    let mut certification = Certification {
        meta,
        results,
        records,
        certificate,
        not_applicable,
        interrupted,
        rescued,
        interrupted_file: None,
        partial_error: None,
    };
    if let Some(folder) = folder.take() {
        let committed = commit_certification(folder, &certification)?;
        certification.interrupted_file = committed.interrupted;
        certification.partial_error = committed.partial_error.map(|e| e.to_string());
    }
    Ok(certification)
}

/// The files of a certification: the reports of `opconform run` and the certificate.
fn certification_files(certification: &Certification) -> io::Result<Vec<(&'static str, String)>> {
    let mut files = report::render_files(&certification.report())?;
    let [json, markdown] = CERTIFICATE_FILES;
    files.push((json, certification.certificate.to_json()));
    files.push((markdown, certification.certificate.to_markdown()));
    Ok(files)
}

/// Writes a certification's files as the whole contents of `folder`.
fn commit_certification(
    folder: ReportFolder,
    certification: &Certification,
) -> Result<Committed, CertifyError> {
    let files = certification_files(certification).map_err(|error| {
        CertifyError::Folder(FolderError::Io {
            path: folder.dir().to_path_buf(),
            error,
        })
    })?;
    let files: Vec<(&str, &[u8])> = files.iter().map(|(n, c)| (*n, c.as_bytes())).collect();
    folder
        .commit(&files, certification.interrupted)
        .map_err(CertifyError::Folder)
}

/// Writes the reports of `opconform run` and the certificate files as the whole contents of
/// `dir` (locked, replaced in one rename).
pub fn write_certification(
    dir: &Path,
    certification: &Certification,
) -> Result<Committed, CertifyError> {
    let folder = ReportFolder::open(dir).map_err(CertifyError::Folder)?;
    commit_certification(folder, certification)
}

#[cfg(test)]
mod tests {
    use super::*;
    use opconform_backend::OperatorKind;

    fn info(claims: Vec<Level>) -> BackendInfo {
        BackendInfo {
            name: "b".into(),
            version: "1".into(),
            device: "d".into(),
            claims,
            operators: vec![OperatorKind::DmlArgMax],
        }
    }

    #[test]
    fn targets_come_from_the_claims_or_the_feature_level() {
        let both = info(vec![Level::dml(0x4100), Level::Opset(16)]);
        assert_eq!(
            targets(&both, None).unwrap(),
            vec![Level::dml(0x4100), Level::Opset(16)]
        );
        assert_eq!(
            targets(&both, Some(Level::dml(0x3000))).unwrap(),
            vec![Level::dml(0x3000), Level::Opset(16)]
        );
        assert!(matches!(
            targets(&both, Some(Level::Opset(1))),
            Err(CertifyError::Usage(_))
        ));
        let openvino_only = info(vec![Level::Opset(1)]);
        assert_eq!(
            targets(&openvino_only, None).unwrap(),
            vec![Level::Opset(1)]
        );
        // A DirectML level above the claims is a target too: its cases come out unsupported.
        assert_eq!(
            targets(&openvino_only, Some(Level::dml(0x4100))).unwrap(),
            vec![Level::dml(0x4100), Level::Opset(1)]
        );
    }
}
