//! End-to-end training on small synthetic problems: learning `C` (a3, KPCA with learnable `C`)
//! lowers the training loss, and below what the same start with `C` frozen reaches.
use ksvd_general::embed::LearnableEmbedding;
use ksvd_general::head::Loss;
use ksvd_general::train::{train, FeatureSource, SgdOptions};
use ksvd_general::{compatibility_matrix, ksvd_fixed, EmbeddingScale, Kpca, KpcaPlan, LearnableKsvd};
use ksvd_kernels::{Compat, Kernel};
use ksvd_linalg::random::{gaussian_matrix, rng_from_seed};
use ndarray::{Array1, Array2};

fn problem() -> (Array2<f64>, Array1<f64>, Array1<f64>) {
    let x = gaussian_matrix(&mut rng_from_seed(42), 80, 3);
    // Classes by the sign of x0 + x1 - x2; a regression target that is a smooth function of x.
    let y_cls = Array1::from_iter(x.outer_iter().map(|r| if r[0] + r[1] - r[2] > 0.0 { 1.0 } else { 0.0 }));
    let y_reg = Array1::from_iter(x.outer_iter().map(|r| (r[0] - 0.5 * r[2]).tanh() * 3.0));
    (x, y_cls, y_reg)
}

fn opts(lr: f64) -> SgdOptions {
    SgdOptions {
        lr,
        iterations: 400,
        batch_size: None,
        refresh_every: 1,
        standardize_features: false,
        standardize_target: false,
        head_init: ksvd_general::head::HeadInit::Pytorch,
        seed: 7,
    }
}

#[test]
fn a3_lowers_the_training_loss_below_the_frozen_start() {
    let (x, y_cls, y_reg) = problem();
    let c0 = compatibility_matrix(x.view(), Compat::Random { seed: 3 }).unwrap() * 0.2;
    for kernel in [Kernel::Rbf { gamma: 8f64.sqrt() }, Kernel::Sne { gamma: 8f64.sqrt() }] {
        for (loss, y, lr) in [
            (Loss::CrossEntropy { classes: 2 }, &y_cls, 0.2),
            (Loss::Mse, &y_reg, 0.02),
        ] {
            let frozen = ksvd_fixed(x.view(), x.view(), c0.view(), kernel, 3, EmbeddingScale::Projection).unwrap();
            let t_frozen = train(FeatureSource::Fixed(frozen.train.view()), y.view(), loss, &opts(lr)).unwrap();
            let mut emb = LearnableKsvd::new(x.clone(), c0.clone(), kernel, 3).unwrap();
            let t = train(FeatureSource::Learnable(&mut emb), y.view(), loss, &opts(lr)).unwrap();
            assert!(
                t.diverged_at.is_none() && t_frozen.diverged_at.is_none(),
                "{kernel:?} {loss:?}"
            );
            // Same start: the first step sees the same features and head.
            assert!(
                (t.first_loss - t_frozen.first_loss).abs() < 1e-9 * t.first_loss,
                "{kernel:?} {loss:?}"
            );
            assert!(
                t.final_train_loss < t.first_loss,
                "{kernel:?} {loss:?}: {} -> {}",
                t.first_loss,
                t.final_train_loss
            );
            assert!(
                t.final_train_loss < 0.95 * t_frozen.final_train_loss,
                "{kernel:?} {loss:?}: learnable {} vs frozen {}",
                t.final_train_loss,
                t_frozen.final_train_loss
            );
            assert!((emb.c() - &c0).iter().any(|d| d.abs() > 0.0));
        }
    }
}

#[test]
fn kpca_with_learnable_c_lowers_the_training_loss() {
    let (x, y_cls, _) = problem();
    let c0: Array2<f64> = Array2::eye(3);
    let mut frozen = Kpca::new(x.clone(), c0.clone(), 6f64.sqrt(), 3, KpcaPlan::Exact, 0).unwrap();
    let f = frozen.refresh().unwrap();
    let loss = Loss::CrossEntropy { classes: 2 };
    let t_frozen = train(FeatureSource::Fixed(f.view()), y_cls.view(), loss, &opts(0.2)).unwrap();
    let mut emb = Kpca::new(x.clone(), c0, 6f64.sqrt(), 3, KpcaPlan::Exact, 0).unwrap();
    let t = train(FeatureSource::Learnable(&mut emb), y_cls.view(), loss, &opts(0.2)).unwrap();
    assert!(t.final_train_loss < t.first_loss);
    assert!(
        t.final_train_loss < 0.95 * t_frozen.final_train_loss,
        "learnable {} vs frozen {}",
        t.final_train_loss,
        t_frozen.final_train_loss
    );
}
