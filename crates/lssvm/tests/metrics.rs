//! The top-k rule of multi-label prediction feeding the F1 of `ksvd-metrics` (arithmetic in the
//! comments).
// A failed unwrap in a test is a test failure with a backtrace, which is what we want here.
#![allow(clippy::unwrap_used)]
use ksvd_lssvm::{f1_multilabel, label_counts, label_indicator, top_k_labels, ZeroDivision};
use ndarray::array;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 4.0 * f64::EPSILON
}

#[test]
fn top_k_rule_feeds_multilabel_f1() {
    // Scores for 2 samples x 3 labels; sample 0 has 2 true labels {0, 2}, sample 1 has 1 {1}.
    let y_true = label_indicator(&[vec![0, 2], vec![1]], 3).unwrap();
    let scores = array![[0.9, 0.8, -0.1], [0.2, 0.7, 0.1]];
    let k = label_counts(y_true.view());
    assert_eq!(k, vec![2, 1]);
    // Top-2 of sample 0 = {0, 1}; top-1 of sample 1 = {1}.
    let pred = top_k_labels(scores.view(), &k).unwrap();
    assert_eq!(pred, array![[true, true, false], [false, true, false]]);
    // TP = 2 (0@0, 1@1), FP = 1 (1@0), FN = 1 (2@0) -> micro = 4 / (4 + 1 + 1) = 2/3.
    // Per label: 0 -> 1, 1 -> tp 1 fp 1 = 2/3, 2 -> fn 1 = 0; macro = (1 + 2/3 + 0)/3 = 5/9.
    let f = f1_multilabel(y_true.view(), pred.view(), ZeroDivision::Zero).unwrap();
    assert!(close(f.micro_f1, 2.0 / 3.0));
    assert!(close(f.macro_f1, 5.0 / 9.0));
}
