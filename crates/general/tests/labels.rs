//! Label encoding of the committed UCI data.
use ksvd_datasets::DataRoot;

/// Label encoding on the committed data: class 1 is the positive class of each binary dataset
/// (diabetes `tested_positive`, ionosphere `g`ood, liver "liver patient", selector 1), with the
/// UCI counts, and a split keeps every row's label.
#[test]
fn binary_labels_are_the_uci_positive_classes() {
    use ksvd_datasets::{DatasetName, Task};
    use ksvd_general::{prepare, Preprocessing};
    let root = DataRoot::committed().unwrap();
    for (name, positive, n_pos, n) in [
        ("diabetes", "tested_positive", 268, 768),
        ("ionosphere", "good", 225, 351),
        ("liver", "liver patient (selector 1)", 416, 583),
    ] {
        let data = root.tabular(name.parse::<DatasetName>().unwrap()).unwrap();
        let Task::Classification { class_names } = &data.task else {
            panic!("{name} is a classification set")
        };
        assert_eq!(class_names[1], positive, "{name}");
        assert_eq!(data.target.len(), n, "{name}");
        assert_eq!(data.target.iter().filter(|&&t| t == 1.0).count(), n_pos, "{name}");
        assert!(data.target.iter().all(|&t| t == 0.0 || t == 1.0));
        let p = prepare(&data, &Preprocessing::default(), 0).unwrap();
        for (rows, y) in [(&p.train_rows, &p.y_train), (&p.test_rows, &p.y_test)] {
            assert!(rows.iter().zip(y).all(|(&r, &t)| data.target[r] == t));
        }
    }
}
