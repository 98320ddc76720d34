//! End-to-end checks on planted structure: k-means recovers separated blobs reproducibly, and
//! k-means on exact SVD embeddings recovers a planted block-diagonal biclustering.
use ksvd_bicluster::{bicluster, coherence, kmeans, nmi, BiclusterError, KMeansParams};
use ksvd_linalg::{dense, random, CsrMatrix};
use ndarray::{s, Array2};
use rand::Rng;

/// Whether two labelings define the same partition (equal up to renaming the labels).
fn same_partition(a: &[usize], b: &[usize]) -> bool {
    let mut forward = std::collections::HashMap::new();
    let mut backward = std::collections::HashMap::new();
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| *forward.entry(x).or_insert(y) == y && *backward.entry(y).or_insert(x) == x)
}

/// Asserts an exact recovery: same partition, and NMI = 1 up to rounding.
fn assert_recovered(found: &[usize], truth: &[usize], what: &str) {
    assert!(same_partition(found, truth), "{what}: {found:?} vs {truth:?}");
    let score = nmi(found, truth).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        (score - 1.0).abs() <= 16.0 * f64::EPSILON * truth.len() as f64,
        "{what}: NMI {score}"
    );
}

/// `per` points around each of `centres` (rows), Gaussian with standard deviation `sd`.
fn blobs(centres: &Array2<f64>, per: usize, sd: f64, seed: u64) -> (Array2<f64>, Vec<usize>) {
    let mut rng = random::rng_from_seed(seed);
    let noise = random::gaussian_matrix(&mut rng, centres.nrows() * per, centres.ncols());
    let mut x = Array2::zeros(noise.raw_dim());
    let mut truth = Vec::new();
    for (i, mut row) in x.outer_iter_mut().enumerate() {
        let c = i / per;
        row.assign(&(&centres.row(c) + &(&noise.row(i) * sd)));
        truth.push(c);
    }
    (x, truth)
}

#[test]
fn kmeans_recovers_separated_blobs_and_is_reproducible() {
    // Centres 10 apart, noise sd 0.5: every point is > 8 sd closer to its own centre.
    let centres = ndarray::array![[0.0, 0.0, 0.0], [10.0, 0.0, 0.0], [0.0, 10.0, 0.0], [0.0, 0.0, 10.0]];
    let (x, truth) = blobs(&centres, 50, 0.5, 7);
    let params = KMeansParams::new();
    let a = kmeans(x.view(), 4, 123, &params).unwrap();
    assert_recovered(&a.labels, &truth, "seed 123");
    // Same seed, same everything.
    let b = kmeans(x.view(), 4, 123, &params).unwrap();
    assert_eq!(a, b);
    // Other seeds may number the clusters differently but find the same partition.
    for seed in [0, 1, 2] {
        let c = kmeans(x.view(), 4, seed, &params.clone().n_runs(3)).unwrap();
        assert_recovered(&c.labels, &truth, &format!("seed {seed}"));
    }
    // Inertia is the within-cluster sum of squares around the returned centroids.
    let manual: f64 = x
        .outer_iter()
        .zip(&a.labels)
        .map(|(row, &l)| (&row - &a.centroids.row(l)).mapv(|v| v * v).sum())
        .sum();
    assert!((a.inertia - manual).abs() <= 1e3 * f64::EPSILON * manual);
    // The centroids are the blob means up to the noise: sd / sqrt(50) ~ 0.07 per coordinate.
    for (l, c) in a.labels.iter().zip(&truth) {
        let d = (&a.centroids.row(*l) - &centres.row(*c))
            .mapv(f64::abs)
            .fold(0.0f64, |m, &v| m.max(v));
        assert!(d < 0.5, "centroid {l} is {d} from blob {c}");
    }
}

#[test]
fn kmeans_does_not_depend_on_the_thread_count() {
    let centres = ndarray::array![[0.0, 0.0], [3.0, 0.0], [0.0, 3.0]];
    // Overlapping blobs (sd 1 vs spacing 3), so the result depends on every tie-break.
    let (x, _) = blobs(&centres, 60, 1.0, 9);
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| kmeans(x.view(), 3, 77, &KMeansParams::new()).unwrap())
    };
    assert_eq!(run(1), run(2));
}

#[test]
fn row_normalisation_clusters_directions() {
    // Two rays from the origin at very different radii: plain k-means splits by radius, k-means
    // on normalised rows splits by direction.
    let mut rng = random::rng_from_seed(3);
    let mut x = Array2::zeros((40, 2));
    let mut truth = Vec::new();
    for i in 0..40 {
        let dir = i % 2;
        let radius = if i < 20 { 1.0 } else { 100.0 } * (1.0 + 0.1 * rng.gen::<f64>());
        let angle = if dir == 0 { 0.1 } else { 1.4 } + 0.02 * rng.gen::<f64>();
        x[[i, 0]] = radius * angle.cos();
        x[[i, 1]] = radius * angle.sin();
        truth.push(dir);
    }
    let normalised = kmeans(x.view(), 2, 5, &KMeansParams::new().normalize_rows(true)).unwrap();
    assert_recovered(&normalised.labels, &truth, "normalised rows");
    let plain = kmeans(x.view(), 2, 5, &KMeansParams::new()).unwrap();
    assert!(nmi(&plain.labels, &truth).unwrap() < 0.5);
}

/// A document-term matrix with `k` planted biclusters of different sizes (documents of block `b`
/// use only the terms of block `b`), plus a weak uniform background on every entry.
fn planted(doc_sizes: &[usize], term_sizes: &[usize], seed: u64) -> (Array2<f64>, Vec<usize>, Vec<usize>) {
    let docs: Vec<usize> = doc_sizes
        .iter()
        .enumerate()
        .flat_map(|(b, &s)| std::iter::repeat_n(b, s))
        .collect();
    let terms: Vec<usize> = term_sizes
        .iter()
        .enumerate()
        .flat_map(|(b, &s)| std::iter::repeat_n(b, s))
        .collect();
    let mut rng = random::rng_from_seed(seed);
    let x = Array2::from_shape_fn((docs.len(), terms.len()), |(i, j)| {
        let background = 0.05 * rng.gen::<f64>();
        if docs[i] == terms[j] {
            1.0 + 0.5 * rng.gen::<f64>() + background
        } else {
            background
        }
    });
    (x, docs, terms)
}

#[test]
fn bicluster_recovers_planted_blocks_from_exact_svd() {
    let (x, docs, terms) = planted(&[30, 20, 12], &[15, 25, 10], 11);
    let k = 3;
    let svd = dense::thin_svd(x.view()).unwrap();
    // Embeddings: the leading k singular vectors (rows of U_k and V_k).
    let (u, v) = (svd.u.slice(s![.., ..k]), svd.v.slice(s![.., ..k]));
    for normalize_rows in [false, true] {
        let params = KMeansParams::new().normalize_rows(normalize_rows);
        let b = bicluster(u, v, k, k, 2024, &params).unwrap();
        assert_recovered(
            &b.doc_labels,
            &docs,
            &format!("documents, normalize_rows = {normalize_rows}"),
        );
        assert_recovered(
            &b.term_labels,
            &terms,
            &format!("terms, normalize_rows = {normalize_rows}"),
        );
        assert_eq!(b, bicluster(u, v, k, k, 2024, &params).unwrap(), "not reproducible");
    }
    // The planted term clusters are more coherent than a shuffled assignment of the same sizes.
    let sparse = CsrMatrix::from_dense(x.view()).unwrap();
    let planted_coh = coherence(&sparse, &terms).unwrap().score;
    let shuffled: Vec<usize> = (0..terms.len()).map(|j| terms[(j * 7) % terms.len()]).collect();
    let shuffled_coh = coherence(&sparse, &shuffled).unwrap().score;
    assert!(
        planted_coh > shuffled_coh,
        "planted {planted_coh} <= shuffled {shuffled_coh}"
    );
}

#[test]
fn bicluster_rejects_bad_inputs() {
    let params = KMeansParams::new();
    let good = Array2::<f64>::eye(4);
    let mut bad = Array2::<f64>::eye(4);
    bad[[2, 1]] = f64::NAN;
    assert!(matches!(
        bicluster(good.view(), bad.view(), 2, 2, 0, &params),
        Err(BiclusterError::NonFinite { row: 2, col: 1, .. })
    ));
    assert!(matches!(
        bicluster(good.view(), good.view(), 2, 5, 0, &params),
        Err(BiclusterError::TooManyClusters { k: 5, n: 4, .. })
    ));
    let empty = Array2::<f64>::zeros((0, 3));
    assert!(matches!(
        bicluster(empty.view(), good.view(), 1, 1, 0, &params),
        Err(BiclusterError::Empty { .. })
    ));
    assert!(matches!(
        bicluster(good.view(), good.view(), 2, 2, 0, &params.clone().n_runs(0)),
        Err(BiclusterError::InvalidParameter { name: "n_runs", .. })
    ));
}
