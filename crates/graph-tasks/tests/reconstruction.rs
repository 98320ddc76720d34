//! Graph reconstruction against a brute-force computation: every pairwise score, a full sort per
//! node, a dense difference matrix and its dense singular values.
use ksvd_graph_tasks::{reconstruct_adjacency, reconstruction_norms, Distance, Embeddings};
use ksvd_linalg::dense::singular_values;
use ksvd_linalg::random::{gaussian_matrix, rng_from_seed};
use ksvd_linalg::CsrMatrix;
use ndarray::{concatenate, Array2, Axis};
use rand::Rng;

fn random_graph(n: usize, p: f64, seed: u64) -> CsrMatrix {
    let mut rng = rng_from_seed(seed);
    let mut t = vec![];
    for i in 0..n {
        for j in 0..n {
            if rng.gen::<f64>() < p {
                t.push((i, j, 1.0));
            }
        }
    }
    CsrMatrix::from_triplets(n, n, t).unwrap()
}

/// Scores of the brute force: larger is closer.
fn score(emb: &Embeddings, d: Distance, v: usize, w: usize) -> f64 {
    let feats = |e: &Embeddings| match e {
        Embeddings::Single(x) => x.clone(),
        Embeddings::SourceTarget { source, target } => concatenate(Axis(1), &[source.view(), target.view()]).unwrap(),
    };
    match d {
        Distance::Euclidean => {
            let f = feats(emb);
            -(&f.row(v) - &f.row(w)).mapv(|x| x * x).sum()
        }
        Distance::Cosine => {
            let f = feats(emb);
            let (a, b) = (f.row(v), f.row(w));
            a.dot(&b) / (a.dot(&a).sqrt() * b.dot(&b).sqrt())
        }
        Distance::InnerProduct => match emb {
            Embeddings::Single(x) => x.row(v).dot(&x.row(w)),
            Embeddings::SourceTarget { source, target } => source.row(v).dot(&target.row(w)),
        },
    }
}

fn brute_force(adj: &CsrMatrix, emb: &Embeddings, d: Distance, exclude_self: bool) -> Array2<f64> {
    let n = adj.nrows();
    let mut xhat = Array2::zeros((n, n));
    for v in 0..n {
        let k = adj.row(v).0.len();
        let mut cands: Vec<(f64, usize)> = (0..n)
            .filter(|&w| !(exclude_self && w == v))
            .map(|w| (score(emb, d, v, w), w))
            .collect();
        cands.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        for &(_, w) in cands.iter().take(k) {
            xhat[[v, w]] = 1.0;
        }
    }
    xhat
}

#[test]
fn reconstruction_and_norms_match_brute_force() {
    let n = 37;
    let adj = random_graph(n, 0.08, 11);
    let mut rng = rng_from_seed(5);
    let single = Embeddings::Single(gaussian_matrix(&mut rng, n, 4));
    let two = Embeddings::SourceTarget {
        source: gaussian_matrix(&mut rng, n, 3),
        target: gaussian_matrix(&mut rng, n, 3),
    };
    let x = adj.to_dense();
    for emb in [&single, &two] {
        for d in [Distance::Euclidean, Distance::Cosine, Distance::InnerProduct] {
            for exclude_self in [true, false] {
                let want = brute_force(&adj, emb, d, exclude_self);
                let got = reconstruct_adjacency(&adj, emb, d, exclude_self).unwrap();
                assert_eq!(got.to_dense(), want, "{d:?} exclude_self={exclude_self}");
                let diff = &x - &want;
                let l1 = diff
                    .axis_iter(Axis(1))
                    .map(|c| c.mapv(f64::abs).sum())
                    .fold(0.0, f64::max);
                let linf = diff
                    .axis_iter(Axis(0))
                    .map(|r| r.mapv(f64::abs).sum())
                    .fold(0.0, f64::max);
                let wrong = diff.iter().filter(|&&v| v != 0.0).count();
                let l2 = singular_values(diff.view()).unwrap()[0];
                let norms = reconstruction_norms(&adj, &got).unwrap();
                assert_eq!((norms.l1, norms.linf, norms.wrong_entries), (l1, linf, wrong));
                assert!((norms.frobenius - (wrong as f64).sqrt()).abs() <= 4.0 * f64::EPSILON * norms.frobenius);
                // Lanczos to relative residual 1e-10 against faer's dense singular values.
                assert!((norms.l2 - l2).abs() <= 1e-8 * l2, "l2 {} vs {l2}", norms.l2);
            }
        }
    }
}

#[test]
fn ties_go_to_the_smaller_index_and_self_is_excluded() {
    // Node 0 has out-degree 2; nodes 1..4 have identical embeddings, node 0 too.
    let adj = CsrMatrix::from_triplets(5, 5, [(0, 3, 1.0), (0, 4, 1.0)]).unwrap();
    let emb = Embeddings::Single(Array2::ones((5, 2)));
    let got = reconstruct_adjacency(&adj, &emb, Distance::Euclidean, true).unwrap();
    assert_eq!(got.row(0).0, &[1, 2]);
    let with_self = reconstruct_adjacency(&adj, &emb, Distance::Euclidean, false).unwrap();
    assert_eq!(with_self.row(0).0, &[0, 1]);
    let norms = reconstruction_norms(&adj, &got).unwrap();
    // Two missed arcs (columns 3, 4) and two spurious ones (columns 1, 2): every column sums to 1;
    // D = e_0 [0 -1 -1 1 1] has a single singular value 2.
    assert_eq!((norms.l1, norms.linf, norms.wrong_entries), (1.0, 4.0, 4));
    assert!((norms.l2 - 2.0).abs() <= 1e-12);
}

#[test]
fn perfect_reconstruction_has_zero_norms_and_bad_shapes_are_rejected() {
    let adj = CsrMatrix::from_triplets(3, 3, [(0, 1, 1.0), (1, 2, 1.0), (2, 0, 1.0)]).unwrap();
    let norms = reconstruction_norms(&adj, &adj).unwrap();
    assert_eq!((norms.l1, norms.l2, norms.wrong_entries), (0.0, 0.0, 0));
    let short = Embeddings::Single(Array2::ones((2, 2)));
    assert!(reconstruct_adjacency(&adj, &short, Distance::Euclidean, true).is_err());
    let nan = Embeddings::Single(Array2::from_elem((3, 1), f64::NAN));
    assert!(reconstruct_adjacency(&adj, &nan, Distance::Euclidean, true).is_err());
    let sides = Embeddings::SourceTarget {
        source: Array2::ones((3, 2)),
        target: Array2::ones((3, 1)),
    };
    assert!(reconstruct_adjacency(&adj, &sides, Distance::InnerProduct, true).is_err());
}
