//! Accuracy and F1 scores against hand-computed values (arithmetic in the comments).
// A failed unwrap in a test is a test failure with a backtrace, which is what we want here.
#![allow(clippy::unwrap_used)]
use ksvd_metrics::{accuracy, f1_multiclass, f1_multilabel, label_indicator, MetricsError, ZeroDivision};
use ndarray::{array, Array2};

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 4.0 * f64::EPSILON
}

#[test]
fn multiclass_f1_by_hand() {
    let y_true = [0, 0, 1, 1, 2, 2];
    let y_pred = [0, 1, 1, 1, 0, 2];
    // class 0: tp = 1 (i=0), fp = 1 (i=4), fn = 1 (i=1) -> F1 = 2/(2+1+1) = 1/2
    // class 1: tp = 2 (i=2,3), fp = 1 (i=1), fn = 0    -> F1 = 4/(4+1)   = 4/5
    // class 2: tp = 1 (i=5), fp = 0, fn = 1 (i=4)      -> F1 = 2/(2+1)   = 2/3
    // macro = (1/2 + 4/5 + 2/3) / 3 = (15 + 24 + 20) / 90 = 59/90
    // micro: TP = 4, FP = 2, FN = 2 -> 8 / 12 = 2/3 = accuracy (4 of 6 correct)
    let f = f1_multiclass(&y_true, &y_pred, 3, ZeroDivision::Zero).unwrap();
    assert_eq!(f.per_class, vec![Some(0.5), Some(0.8), Some(2.0 / 3.0)]);
    assert!(close(f.macro_f1, 59.0 / 90.0));
    assert!(close(f.micro_f1, 2.0 / 3.0));
    assert!(close(accuracy(&y_true, &y_pred).unwrap(), f.micro_f1));
}

#[test]
fn multiclass_macro_f1_with_an_absent_class() {
    // Same predictions, but 4 classes: class 3 has no true and no predicted sample (0/0).
    let y_true = [0, 0, 1, 1, 2, 2];
    let y_pred = [0, 1, 1, 1, 0, 2];
    let zero = f1_multiclass(&y_true, &y_pred, 4, ZeroDivision::Zero).unwrap();
    let one = f1_multiclass(&y_true, &y_pred, 4, ZeroDivision::One).unwrap();
    let excl = f1_multiclass(&y_true, &y_pred, 4, ZeroDivision::Exclude).unwrap();
    assert_eq!(zero.per_class[3], None);
    // Zero:    (59/30 + 0) / 4 = 59/120   (scikit-learn with labels=range(4), zero_division default)
    // One:     (59/30 + 1) / 4 = 89/120   (scikit-learn zero_division=1)
    // Exclude: (59/30) / 3     = 59/90    (scikit-learn on integer labels: only observed classes)
    assert!(close(zero.macro_f1, 59.0 / 120.0));
    assert!(close(one.macro_f1, 89.0 / 120.0));
    assert!(close(excl.macro_f1, 59.0 / 90.0));
    // Micro-F1 pools counts and is unaffected: 2/3.
    for f in [&zero, &one, &excl] {
        assert!(close(f.micro_f1, 2.0 / 3.0));
    }
    // A class that is predicted but never true is not "absent": tp = 0, fp = 1 -> F1 = 0.
    let f = f1_multiclass(&[0, 0, 1], &[0, 2, 1], 3, ZeroDivision::Exclude).unwrap();
    // class 0: tp 1, fn 1 -> 2/3; class 1: tp 1 -> 1; class 2: fp 1 -> 0; macro = (2/3 + 1 + 0)/3 = 5/9
    assert!(close(f.macro_f1, 5.0 / 9.0));
}

#[test]
fn multilabel_f1_by_hand() {
    // Columns are labels 0, 1, 2, 3; label 3 is absent from truth and prediction.
    let y_true = array![
        [true, false, true, false],
        [false, true, false, false],
        [true, true, false, false]
    ];
    let y_pred = array![
        [true, false, false, false],
        [false, true, true, false],
        [true, false, false, false]
    ];
    // label 0: true {0,2}, pred {0,2} -> tp 2            -> F1 = 4/4 = 1
    // label 1: true {1,2}, pred {1}   -> tp 1, fn 1      -> F1 = 2/3
    // label 2: true {0},   pred {1}   -> fp 1, fn 1      -> F1 = 0
    // label 3: nothing                                  -> 0/0
    // micro: TP = 3, FP = 1, FN = 2 -> 6 / (6 + 1 + 2) = 2/3
    // macro: Zero (scikit-learn on indicator matrices) (1 + 2/3 + 0 + 0) / 4 = 5/12;
    //        Exclude (1 + 2/3 + 0) / 3 = 5/9;  One (1 + 2/3 + 0 + 1) / 4 = 2/3
    let zero = f1_multilabel(y_true.view(), y_pred.view(), ZeroDivision::Zero).unwrap();
    assert_eq!(zero.per_class, vec![Some(1.0), Some(2.0 / 3.0), Some(0.0), None]);
    assert!(close(zero.micro_f1, 2.0 / 3.0));
    assert!(close(zero.macro_f1, 5.0 / 12.0));
    let excl = f1_multilabel(y_true.view(), y_pred.view(), ZeroDivision::Exclude).unwrap();
    assert!(close(excl.macro_f1, 5.0 / 9.0));
    let one = f1_multilabel(y_true.view(), y_pred.view(), ZeroDivision::One).unwrap();
    assert!(close(one.macro_f1, 2.0 / 3.0));
}

#[test]
fn metric_input_errors() {
    assert!(matches!(accuracy(&[], &[]), Err(MetricsError::Empty { .. })));
    assert_eq!(
        f1_multiclass(&[0, 1], &[0], 2, ZeroDivision::Zero).unwrap_err(),
        MetricsError::LengthMismatch {
            what: "predicted labels",
            expected: 2,
            found: 1
        }
    );
    assert_eq!(
        f1_multiclass(&[0, 1], &[0, 5], 2, ZeroDivision::Zero).unwrap_err(),
        MetricsError::LabelOutOfRange {
            index: 1,
            label: 5,
            n_classes: 2
        }
    );
    let a = Array2::from_elem((2, 3), false);
    let b = Array2::from_elem((2, 2), false);
    assert!(matches!(
        f1_multilabel(a.view(), b.view(), ZeroDivision::Zero),
        Err(MetricsError::LengthMismatch {
            what: "predicted label columns",
            ..
        })
    ));
    assert!(matches!(
        label_indicator(&[vec![3]], 3),
        Err(MetricsError::LabelOutOfRange { label: 3, .. })
    ));
    // All-empty indicators: every label is 0/0; micro falls back to the zero-division value.
    let f = f1_multilabel(a.view(), a.view(), ZeroDivision::Zero).unwrap();
    assert_eq!((f.micro_f1, f.macro_f1), (0.0, 0.0));
}
