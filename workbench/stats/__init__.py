"""Statistics: the one bootstrap engine and every estimate and interval the analyses report.

``_bootstrap`` (clusters, strata, percentile/BCa/t/CR2 intervals, vectorised AUROC: :func:`bootstrap`, :func:`auroc_ci`);
``_success`` (Acc, Pass^k, Pass@k: :func:`reliability`) and ``_efficiency`` (Steps, Peak, Dependency, cost:
:func:`efficiency`); ``_agreement`` (kappa, Fleiss' kappa, Krippendorff's alpha); ``_discrimination`` (AUROC, precision
and recall at tau, SJC's judge table); ``_correlation`` (FRANK's partial correlation, Williams' test); ``_calibration``
(reliability curves, calibration errors, recalibration, thresholds for a target precision); ``_compare`` (paired method
comparisons); ``_coverage`` (how often each interval method covers the truth)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench._util.lazy import attach

__all__ = [
    "AGREEMENT_METHOD", "agreement_pairs", "agreement_report", "agreement_table", "AgreementReport", "ALTERNATIVES",
    "as_generator", "AT_BOUND", "auroc", "auroc_ci", "bin_edges", "bin_index", "binary_labels", "bootstrap",
    "ABOVE_ZERO", "BootstrapResult", "brier", "BrierDecomposition", "calibration_table", "calibration_test",
    "CALIBRATION_TEST_EXACT", "CalibrationTest", "CE_INTERVAL_METHODS",
    "clustered_mcnemar_p", "cohen_kappa", "compare_to_baseline", "complete_rows", "correlation_difference_ci",
    "CORRELATION_INTERVALS", "CORRELATION_METHODS", "CorrelationDifference", "cost", "cr2_mean", "cr2_p_value",
    "cumulative_tokens", "debiased_calibration_error", "DEFAULT_N_BOOT", "dependency", "disagreements", "ece",
    "efficiency", "efficiency_by", "efficiency_by_encoding", "FEW_SCENARIOS", "fleiss_kappa", "GEE_MAX_CLUSTER",
    "gold_classes", "HEAVY_TAILS", "heterogeneous_coverage", "heterogeneous_population_auroc", "HIGHER_IS_BETTER",
    "interval", "Interval", "INTERVAL_COLUMNS", "interval_coverage", "INTERVAL_METHODS", "interval_reason",
    "INTERVAL_SCHEMA", "jackknife_se", "jackknife_se_of", "judge_table", "KAPPA_METHOD", "krippendorff_alpha",
    "labeled_scores", "labelled_pairs", "make_units", "METRICS", "missing_mask", "multi_rater_agreement", "NEGATIVE",
    "NOT_A_CLASS", "ONE_SCENARIO", "out_of_fold_calls", "paired_auroc_difference", "paired_difference",
    "partial_correlation", "partial_correlation_ci", "PartialCorrelation", "pass_at_k", "pass_hat_k", "peak",
    "percent_agreement", "performance_profile", "plain_correlation", "PLAIN_METHODS", "population_auroc", "POSITIVE",
    "precision_recall_at", "Price", "probability_of_improvement", "recalibrate", "recalibration_table", "reliability",
    "reliability_by_k", "reliability_curve", "resample_counts", "resamples", "residual_kurtosis", "residualise",
    "Seed", "selection_bootstrap", "simultaneous_interval", "squared_ce_debiased", "STRATEGIES",
    "TAU_FEW_SCENARIOS", "TAU_INTERVAL_METHODS", "TAU_MIN_ENTRIES", "TAU_MIN_SCENARIOS", "threshold_for",
    "threshold_sweep", "unified_interval", "Units", "verdict", "williams_test", "ZERO_WIDTH"
]

__getattr__, __dir__ = attach(__name__, {
    "_agreement": [
        "AGREEMENT_METHOD", "agreement_pairs", "agreement_report", "agreement_table", "AgreementReport", "cohen_kappa",
        "disagreements", "fleiss_kappa", "KAPPA_METHOD", "krippendorff_alpha", "labelled_pairs",
        "multi_rater_agreement", "percent_agreement"
    ],
    "_bootstrap": [
        "as_generator", "AT_BOUND", "auroc_ci", "binary_labels", "bootstrap", "BootstrapResult", "complete_rows",
        "cr2_mean", "cr2_p_value", "DEFAULT_N_BOOT", "FEW_SCENARIOS", "Interval", "interval", "INTERVAL_COLUMNS",
        "INTERVAL_METHODS", "interval_reason", "INTERVAL_SCHEMA", "jackknife_se_of", "make_units", "missing_mask",
        "ONE_SCENARIO", "resample_counts", "resamples", "Seed", "Units", "ZERO_WIDTH"
    ],
    "_calibration": [
        "ABOVE_ZERO", "bin_edges", "bin_index", "brier", "BrierDecomposition", "calibration_table", "calibration_test",
        "CALIBRATION_TEST_EXACT", "CalibrationTest", "CE_INTERVAL_METHODS",
        "debiased_calibration_error", "ece", "labeled_scores", "out_of_fold_calls", "paired_auroc_difference",
        "recalibrate", "recalibration_table", "reliability_curve", "selection_bootstrap", "squared_ce_debiased",
        "STRATEGIES", "TAU_FEW_SCENARIOS", "TAU_INTERVAL_METHODS", "TAU_MIN_ENTRIES", "TAU_MIN_SCENARIOS",
        "threshold_for", "threshold_sweep", "unified_interval"
    ],
    "_compare": [
        "clustered_mcnemar_p", "compare_to_baseline", "GEE_MAX_CLUSTER", "HIGHER_IS_BETTER", "jackknife_se", "METRICS",
        "paired_difference", "performance_profile", "probability_of_improvement", "simultaneous_interval", "verdict"
    ],
    "_correlation": [
        "ALTERNATIVES", "correlation_difference_ci", "CORRELATION_INTERVALS", "CORRELATION_METHODS",
        "CorrelationDifference", "HEAVY_TAILS", "partial_correlation", "partial_correlation_ci", "PartialCorrelation",
        "plain_correlation", "PLAIN_METHODS", "residual_kurtosis", "residualise", "williams_test"
    ],
    "_coverage": ["heterogeneous_coverage", "heterogeneous_population_auroc", "interval_coverage", "population_auroc"],
    "_discrimination": [
        "auroc", "gold_classes", "judge_table", "NEGATIVE", "NOT_A_CLASS", "POSITIVE", "precision_recall_at"
    ],
    "_efficiency": [
        "cost", "cumulative_tokens", "dependency", "efficiency", "efficiency_by", "efficiency_by_encoding", "peak",
        "Price"
    ],
    "_success": ["pass_at_k", "pass_hat_k", "reliability", "reliability_by_k"],
}, public=__all__)

if TYPE_CHECKING:
    from workbench.stats._agreement import (
        AGREEMENT_METHOD, agreement_pairs, agreement_report, agreement_table, AgreementReport, cohen_kappa,
        disagreements, fleiss_kappa, KAPPA_METHOD, krippendorff_alpha, labelled_pairs, multi_rater_agreement,
        percent_agreement
    )
    from workbench.stats._bootstrap import (
        as_generator, AT_BOUND, auroc_ci, binary_labels, bootstrap, BootstrapResult, complete_rows, cr2_mean,
        cr2_p_value, DEFAULT_N_BOOT, FEW_SCENARIOS, Interval, interval, INTERVAL_COLUMNS, INTERVAL_METHODS,
        interval_reason, INTERVAL_SCHEMA, jackknife_se_of, make_units, missing_mask, ONE_SCENARIO, resample_counts,
        resamples, Seed, Units, ZERO_WIDTH
    )
    from workbench.stats._calibration import (
        ABOVE_ZERO, bin_edges, bin_index, brier, BrierDecomposition, calibration_table, calibration_test,
        CALIBRATION_TEST_EXACT, CalibrationTest, CE_INTERVAL_METHODS,
        debiased_calibration_error, ece, labeled_scores, out_of_fold_calls, paired_auroc_difference, recalibrate,
        recalibration_table, reliability_curve, selection_bootstrap, squared_ce_debiased, STRATEGIES,
        TAU_FEW_SCENARIOS, TAU_INTERVAL_METHODS, TAU_MIN_ENTRIES, TAU_MIN_SCENARIOS, threshold_for, threshold_sweep,
        unified_interval
    )
    from workbench.stats._compare import (
        clustered_mcnemar_p, compare_to_baseline, GEE_MAX_CLUSTER, HIGHER_IS_BETTER, jackknife_se, METRICS,
        paired_difference, performance_profile, probability_of_improvement, simultaneous_interval, verdict
    )
    from workbench.stats._correlation import (
        ALTERNATIVES, correlation_difference_ci, CORRELATION_INTERVALS, CORRELATION_METHODS, CorrelationDifference,
        HEAVY_TAILS, partial_correlation, partial_correlation_ci, PartialCorrelation, plain_correlation, PLAIN_METHODS,
        residual_kurtosis, residualise, williams_test
    )
    from workbench.stats._coverage import (
        heterogeneous_coverage, heterogeneous_population_auroc, interval_coverage, population_auroc
    )
    from workbench.stats._discrimination import (
        auroc, gold_classes, judge_table, NEGATIVE, NOT_A_CLASS, POSITIVE, precision_recall_at
    )
    from workbench.stats._efficiency import (
        cost, cumulative_tokens, dependency, efficiency, efficiency_by, efficiency_by_encoding, peak, Price
    )
    from workbench.stats._success import (pass_at_k, pass_hat_k, reliability, reliability_by_k)
