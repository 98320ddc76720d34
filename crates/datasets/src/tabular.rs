//! Dense feature tables with a target column (the UCI sets of the LS-SVM experiments), their
//! readers (CSV, whitespace-separated, Weka ARFF) and missing-value imputation.
//!
//! Missing values are `f64::NAN` in [`TabularData::features`]; nothing is imputed at load time.
//! [`Imputer`] fills them from training rows only (mean or median for numeric columns, the most
//! frequent value for nominal ones), so no information leaks from test rows.
use std::path::Path;

use ndarray::{Array1, Array2};

use crate::error::{DatasetError, Result};
use crate::io::LineReader;
use crate::registry::DatasetName;

/// What a feature column holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ColumnKind {
    /// A real number.
    Numeric,
    /// One of a fixed set of levels. The stored value is the level's number when every level is
    /// a number (ARFF nominal attributes such as `cp {1,4,3,2}` keep their codes), otherwise its
    /// index in `levels` (liver's gender: `Female` = 0, `Male` = 1).
    Nominal {
        /// The levels, as declared.
        levels: Vec<String>,
    },
}

/// Learning task of a table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Task {
    /// Classification; targets are class indices `0..class_names.len()` stored as `f64`.
    Classification {
        /// Name of every class, indexed by class.
        class_names: Vec<String>,
    },
    /// Regression on a real target.
    Regression,
}

/// A dense table: `features` (samples x features, `NaN` = missing) and `target`.
#[derive(Debug, Clone, PartialEq)]
pub struct TabularData {
    /// Registry name or a user-chosen name.
    pub name: String,
    /// Samples x features; `NaN` marks a missing value.
    pub features: Array2<f64>,
    /// Target per sample: class index (classification) or value (regression). Never missing.
    pub target: Array1<f64>,
    /// Name of every feature column.
    pub feature_names: Vec<String>,
    /// Kind of every feature column.
    pub columns: Vec<ColumnKind>,
    /// Classification or regression.
    pub task: Task,
}

/// Counts for the paper's dataset tables.
#[derive(Debug, Clone, PartialEq)]
pub struct TabularStats {
    /// Number of samples.
    pub samples: usize,
    /// Number of feature columns.
    pub features: usize,
    /// Missing feature values.
    pub missing_values: usize,
    /// Samples with at least one missing value.
    pub rows_with_missing: usize,
    /// Number of classes (`None` for regression).
    pub classes: Option<usize>,
    /// Samples per class (empty for regression).
    pub class_counts: Vec<usize>,
}

impl TabularData {
    /// Sizes, missing values and class balance.
    pub fn stats(&self) -> TabularStats {
        let missing_values = self.features.iter().filter(|x| x.is_nan()).count();
        let rows_with_missing = self
            .features
            .rows()
            .into_iter()
            .filter(|r| r.iter().any(|x| x.is_nan()))
            .count();
        let (classes, class_counts) = match &self.task {
            Task::Classification { class_names } => {
                let mut c = vec![0; class_names.len()];
                for &t in &self.target {
                    if let Some(x) = c.get_mut(t as usize) {
                        *x += 1;
                    }
                }
                (Some(class_names.len()), c)
            }
            Task::Regression => (None, Vec::new()),
        };
        TabularStats {
            samples: self.features.nrows(),
            features: self.features.ncols(),
            missing_values,
            rows_with_missing,
            classes,
            class_counts,
        }
    }

    /// Replaces exact zeros by `NaN` in the given columns (for Pima diabetes, where a zero glucose,
    /// blood pressure, skin fold, insulin or BMI means "not measured"; see
    /// [`DIABETES_ZERO_MEANS_MISSING`]). Returns how many values were marked.
    pub fn mark_zeros_missing(&mut self, columns: &[usize]) -> Result<usize> {
        let mut n = 0;
        for &j in columns {
            if j >= self.features.ncols() {
                return Err(DatasetError::InvalidArgument {
                    what: "columns",
                    message: format!("column {j} >= {} feature columns", self.features.ncols()),
                });
            }
            for x in self.features.column_mut(j) {
                if *x == 0.0 {
                    *x = f64::NAN;
                    n += 1;
                }
            }
        }
        Ok(n)
    }
}

/// Pima diabetes columns where 0 means missing: glucose, blood pressure, skin fold, insulin, BMI
/// (0-based feature indices 1..=5; column 0, pregnancies, is a genuine count). Not applied by
/// default: the paper does not say whether it imputed them.
pub const DIABETES_ZERO_MEANS_MISSING: [usize; 5] = [1, 2, 3, 4, 5];

/// How [`Imputer`] fills numeric columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ImputeStrategy {
    /// Mean of the observed training values.
    #[default]
    Mean,
    /// Median of the observed training values (mean of the two middle ones for even counts).
    Median,
}

/// Per-column fill values learnt from training rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Imputer {
    /// Value written into every missing entry of each column.
    pub fill: Vec<f64>,
}

impl Imputer {
    /// Learns fill values from the rows `train_rows` of `data`: `strategy` for numeric columns,
    /// the most frequent value (smallest on ties) for nominal columns. Fails if a column has no
    /// observed value among the training rows or a row index is out of range.
    pub fn fit(data: &TabularData, train_rows: &[usize], strategy: ImputeStrategy) -> Result<Self> {
        let x = &data.features;
        if let Some(&bad) = train_rows.iter().find(|&&i| i >= x.nrows()) {
            return Err(DatasetError::InvalidArgument {
                what: "train_rows",
                message: format!("row {bad} >= {} samples", x.nrows()),
            });
        }
        let mut fill = Vec::with_capacity(x.ncols());
        for (j, kind) in data.columns.iter().enumerate().take(x.ncols()) {
            let mut v: Vec<f64> = train_rows.iter().map(|&i| x[[i, j]]).filter(|x| !x.is_nan()).collect();
            if v.is_empty() {
                return Err(DatasetError::InvalidArgument {
                    what: "train_rows",
                    message: format!(
                        "column {j} (`{}`) has no observed value in the training rows",
                        data.feature_names[j]
                    ),
                });
            }
            v.sort_unstable_by(f64::total_cmp);
            let f = match (kind, strategy) {
                (ColumnKind::Nominal { .. }, _) => mode_of_sorted(&v),
                (ColumnKind::Numeric, ImputeStrategy::Mean) => v.iter().sum::<f64>() / v.len() as f64,
                (ColumnKind::Numeric, ImputeStrategy::Median) => {
                    let m = v.len() / 2;
                    if v.len() % 2 == 1 {
                        v[m]
                    } else {
                        0.5 * (v[m - 1] + v[m])
                    }
                }
            };
            fill.push(f);
        }
        Ok(Self { fill })
    }

    /// Replaces every `NaN` of `x` by its column's fill value; returns how many were replaced.
    pub fn transform(&self, x: &mut Array2<f64>) -> Result<usize> {
        if x.ncols() != self.fill.len() {
            return Err(DatasetError::InvalidArgument {
                what: "x",
                message: format!("{} columns, the imputer was fitted on {}", x.ncols(), self.fill.len()),
            });
        }
        let mut n = 0;
        for mut row in x.rows_mut() {
            for (v, &f) in row.iter_mut().zip(&self.fill) {
                if v.is_nan() {
                    *v = f;
                    n += 1;
                }
            }
        }
        Ok(n)
    }
}

fn mode_of_sorted(v: &[f64]) -> f64 {
    let (mut best, mut best_n, mut k) = (v[0], 0, 0);
    while k < v.len() {
        let mut e = k;
        while e < v.len() && v[e] == v[k] {
            e += 1;
        }
        if e - k > best_n {
            best = v[k];
            best_n = e - k;
        }
        k = e;
    }
    best
}

// ---------------------------------------------------------------------------------------------
// Reading
// ---------------------------------------------------------------------------------------------

/// Layout of a table file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TableFormat {
    /// Comma-separated values without quoting; `header` says whether line 1 names the columns.
    Csv {
        /// The first non-empty line holds column names.
        header: bool,
    },
    /// Numbers separated by runs of spaces/tabs (yacht has irregular double spaces).
    Whitespace,
    /// Weka ARFF: `%` comments, `@attribute` declarations, `@data` rows (comma separated).
    Arff,
}

/// Where the target column is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetPosition {
    /// The first column (protein's `RMSD`).
    First,
    /// The last column (every other UCI set here).
    Last,
}

/// How to read the target column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetSpec {
    /// A real number.
    Regression,
    /// Class `k` is written as `raw_values[k]` in the file and called `names[k]`.
    Classes {
        /// The text of each class in the file.
        raw_values: Vec<String>,
        /// A readable name of each class.
        names: Vec<String>,
    },
}

/// How to turn a table file into [`TabularData`].
///
/// Missing feature values are written as an empty field or `?`; both become `NaN`. A missing
/// target is a parse error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableSpec {
    /// File layout.
    pub format: TableFormat,
    /// Target column position.
    pub target_position: TargetPosition,
    /// Target type.
    pub target: TargetSpec,
    /// String-valued feature columns (0-based feature index, levels): value = index of the level.
    pub categorical: Vec<(usize, Vec<String>)>,
    /// Feature names for files without a header (ignored when the file names its columns).
    pub feature_names: Option<Vec<String>>,
}

impl TableSpec {
    /// A table in `format` with `target` in its last column, no string-valued feature columns
    /// and no feature names of its own (the file's header names the features, else `x1, x2, …`);
    /// the methods below change one of these.
    pub fn new(format: TableFormat, target: TargetSpec) -> Self {
        Self {
            format,
            target_position: TargetPosition::Last,
            target,
            categorical: Vec::new(),
            feature_names: None,
        }
    }

    /// The target in the first column instead of the last.
    pub fn target_first(mut self) -> Self {
        self.target_position = TargetPosition::First;
        self
    }

    /// Feature column `column` (0-based feature index) holds one of `levels` as text; its value
    /// is the index of the level.
    pub fn categorical(mut self, column: usize, levels: &[&str]) -> Self {
        self.categorical.push((column, strings(levels)));
        self
    }

    /// Names of the features for a file without a header.
    pub fn feature_names<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.feature_names = Some(names.into_iter().map(Into::into).collect());
        self
    }
}

impl TargetSpec {
    /// Class `k` written as `raw_values[k]` in the file and called `names[k]`.
    pub fn classes(raw_values: &[&str], names: &[&str]) -> Self {
        Self::Classes {
            raw_values: strings(raw_values),
            names: strings(names),
        }
    }
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// File name (inside the dataset's folder) and reading spec of a registry tabular dataset.
pub fn table_spec(name: DatasetName) -> Option<(&'static str, TableSpec)> {
    let spec = match name {
        DatasetName::Diabetes => (
            "pima-indians-diabetes.csv",
            TableSpec::new(
                TableFormat::Csv { header: false },
                TargetSpec::classes(&["0", "1"], &["tested_negative", "tested_positive"]),
            )
            .feature_names([
                "pregnancies",
                "glucose",
                "blood_pressure",
                "skin_thickness",
                "insulin",
                "bmi",
                "pedigree",
                "age",
            ]),
        ),
        DatasetName::Ionosphere => (
            "ionosphere.csv",
            TableSpec::new(
                TableFormat::Csv { header: false },
                TargetSpec::classes(&["b", "g"], &["bad", "good"]),
            )
            .feature_names((1..=34).map(|i| format!("a{i:02}"))),
        ),
        DatasetName::Liver => (
            "Indian Liver Patient Dataset (ILPD).csv",
            TableSpec::new(
                TableFormat::Csv { header: true },
                TargetSpec::classes(
                    &["2", "1"],
                    &["non-liver patient (selector 2)", "liver patient (selector 1)"],
                ),
            )
            .categorical(1, &["Female", "Male"]),
        ),
        DatasetName::Cholesterol => (
            "cholesterol.arff",
            TableSpec::new(TableFormat::Arff, TargetSpec::Regression),
        ),
        DatasetName::Yacht => (
            "data.txt",
            TableSpec::new(TableFormat::Whitespace, TargetSpec::Regression).feature_names([
                "lcb_position",
                "prismatic_coefficient",
                "length_displacement_ratio",
                "beam_draught_ratio",
                "length_beam_ratio",
                "froude_number",
            ]),
        ),
        DatasetName::Protein => (
            "CASP.csv",
            TableSpec::new(TableFormat::Csv { header: true }, TargetSpec::Regression).target_first(),
        ),
        _ => return None,
    };
    Some(spec)
}

/// Header (if any), declared ARFF column kinds (if any) and data rows with their line numbers.
struct RawTable {
    header: Option<Vec<String>>,
    arff_kinds: Option<Vec<ColumnKind>>,
    rows: Vec<(usize, Vec<String>)>,
}

fn read_raw(path: &Path, format: &TableFormat) -> Result<RawTable> {
    let mut r = LineReader::open(path)?;
    let mut t = RawTable {
        header: None,
        arff_kinds: None,
        rows: Vec::new(),
    };
    let mut arff_names = Vec::new();
    let mut arff_kinds = Vec::new();
    let mut in_data = !matches!(format, TableFormat::Arff);
    while let Some((line_no, line)) = r.next_line()? {
        let s = line.trim();
        if s.is_empty() {
            continue;
        }
        match format {
            TableFormat::Arff if !in_data => {
                if s.starts_with('%') {
                    continue;
                }
                let lower = s.to_ascii_lowercase();
                if lower.starts_with("@relation") {
                    continue;
                } else if lower.starts_with("@data") {
                    in_data = true;
                } else if lower.starts_with("@attribute") {
                    let (name, kind) = parse_arff_attribute(&s["@attribute".len()..])
                        .ok_or_else(|| DatasetError::parse(path, line_no, format!("cannot parse `{s}`")))?;
                    if let Some(kind) = kind {
                        arff_names.push(name);
                        arff_kinds.push(kind);
                    } else {
                        return Err(DatasetError::UnsupportedFormat {
                            path: path.to_path_buf(),
                            message: format!(
                                "line {line_no}: only numeric and nominal ARFF attributes are supported: `{s}`"
                            ),
                        });
                    }
                } else {
                    return Err(DatasetError::parse(
                        path,
                        line_no,
                        format!("unexpected ARFF header line `{s}`"),
                    ));
                }
            }
            TableFormat::Arff => {
                if s.starts_with('%') {
                    continue;
                }
                t.rows
                    .push((line_no, s.split(',').map(|f| f.trim().to_string()).collect()));
            }
            TableFormat::Csv { header } => {
                let fields: Vec<String> = line.split(',').map(|f| f.trim().to_string()).collect();
                if *header && t.header.is_none() {
                    t.header = Some(fields);
                } else {
                    t.rows.push((line_no, fields));
                }
            }
            TableFormat::Whitespace => t
                .rows
                .push((line_no, s.split_whitespace().map(str::to_string).collect())),
        }
    }
    if matches!(format, TableFormat::Arff) {
        if !in_data {
            return Err(DatasetError::parse(path, 1, "no `@data` section"));
        }
        t.header = Some(arff_names);
        t.arff_kinds = Some(arff_kinds);
    }
    Ok(t)
}

/// `'name' type` or `name {a, b}` -> (name, kind); `None` kind for string/date attributes.
fn parse_arff_attribute(rest: &str) -> Option<(String, Option<ColumnKind>)> {
    let rest = rest.trim();
    let (name, ty) = if let Some(q) = rest.strip_prefix('\'') {
        let end = q.find('\'')?;
        (q[..end].to_string(), q[end + 1..].trim())
    } else {
        let end = rest.find(char::is_whitespace)?;
        (rest[..end].to_string(), rest[end..].trim())
    };
    let lower = ty.to_ascii_lowercase();
    let kind = if ty.starts_with('{') && ty.ends_with('}') {
        let levels = ty[1..ty.len() - 1]
            .split(',')
            .map(|l| l.trim().trim_matches('\'').to_string())
            .collect();
        Some(ColumnKind::Nominal { levels })
    } else if ["real", "numeric", "integer"].contains(&lower.as_str()) {
        Some(ColumnKind::Numeric)
    } else {
        None
    };
    Some((name, kind))
}

/// Reads a table file into [`TabularData`] according to `spec`.
pub fn load_table(name: &str, path: &Path, spec: &TableSpec) -> Result<TabularData> {
    let raw = read_raw(path, &spec.format)?;
    let Some(width) = raw
        .header
        .as_ref()
        .map(Vec::len)
        .or_else(|| raw.rows.first().map(|r| r.1.len()))
    else {
        return Err(DatasetError::parse(path, 1, "the file holds no data rows"));
    };
    if width < 2 {
        return Err(DatasetError::parse(
            path,
            1,
            format!("{width} column(s): need features and a target"),
        ));
    }
    let target_col = match spec.target_position {
        TargetPosition::First => 0,
        TargetPosition::Last => width - 1,
    };
    let feature_cols: Vec<usize> = (0..width).filter(|&c| c != target_col).collect();
    let d = feature_cols.len();
    let feature_names: Vec<String> = match (&raw.header, &spec.feature_names) {
        (Some(h), _) => feature_cols.iter().map(|&c| h[c].clone()).collect(),
        (None, Some(names)) if names.len() == d => names.clone(),
        (None, Some(names)) => {
            return Err(DatasetError::inconsistent(
                path,
                format!("{} feature names for {d} feature columns", names.len()),
            ))
        }
        (None, None) => (1..=d).map(|i| format!("x{i}")).collect(),
    };
    let mut columns: Vec<ColumnKind> = match &raw.arff_kinds {
        Some(k) => feature_cols.iter().map(|&c| k[c].clone()).collect(),
        None => vec![ColumnKind::Numeric; d],
    };
    for (j, levels) in &spec.categorical {
        let Some(c) = columns.get_mut(*j) else {
            return Err(DatasetError::inconsistent(
                path,
                format!("categorical column {j} >= {d} features"),
            ));
        };
        *c = ColumnKind::Nominal { levels: levels.clone() };
    }
    // For nominal columns with non-numeric levels, map the level text to its index.
    let level_maps: Vec<Option<&Vec<String>>> = columns
        .iter()
        .map(|k| match k {
            ColumnKind::Nominal { levels } if levels.iter().any(|l| l.parse::<f64>().is_err()) => Some(levels),
            _ => None,
        })
        .collect();
    let n = raw.rows.len();
    let mut features = Array2::<f64>::zeros((n, d));
    let mut target = Array1::<f64>::zeros(n);
    for (i, (line_no, fields)) in raw.rows.iter().enumerate() {
        if fields.len() != width {
            return Err(DatasetError::parse(
                path,
                *line_no,
                format!("{} fields, expected {width}", fields.len()),
            ));
        }
        for (j, &c) in feature_cols.iter().enumerate() {
            let f = fields[c].as_str();
            features[[i, j]] = if f.is_empty() || f == "?" {
                f64::NAN
            } else if let Some(levels) = level_maps[j] {
                levels.iter().position(|l| l == f).ok_or_else(|| {
                    DatasetError::parse(
                        path,
                        *line_no,
                        format!("`{f}` is not a level of `{}` {levels:?}", feature_names[j]),
                    )
                })? as f64
            } else {
                f.parse::<f64>().ok().filter(|x| x.is_finite()).ok_or_else(|| {
                    DatasetError::parse(
                        path,
                        *line_no,
                        format!("`{f}` in column `{}` is not a number", feature_names[j]),
                    )
                })?
            };
        }
        let t = fields[target_col].as_str();
        target[i] = match &spec.target {
            TargetSpec::Regression => t
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite())
                .ok_or_else(|| DatasetError::parse(path, *line_no, format!("target `{t}` is not a number")))?,
            TargetSpec::Classes { raw_values, .. } => raw_values.iter().position(|v| v == t).ok_or_else(|| {
                DatasetError::parse(
                    path,
                    *line_no,
                    format!("target `{t}` is not one of the classes {raw_values:?}"),
                )
            })? as f64,
        };
    }
    let task = match &spec.target {
        TargetSpec::Regression => Task::Regression,
        TargetSpec::Classes { names, .. } => Task::Classification {
            class_names: names.clone(),
        },
    };
    Ok(TabularData {
        name: name.to_string(),
        features,
        target,
        feature_names,
        columns,
        task,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn csv_spec(header: bool) -> TableSpec {
        TableSpec::new(
            TableFormat::Csv { header },
            TargetSpec::classes(&["2", "1"], &["neg", "pos"]),
        )
        .categorical(1, &["Female", "Male"])
    }

    #[test]
    fn csv_with_header_missing_values_and_categories() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.csv");
        std::fs::write(&p, "age,sex,ag,label\r\n65,Female,0.9,1\r\n62,Male,,2\r\n40,Male,1.5,1").unwrap();
        let t = load_table("t", &p, &csv_spec(true)).unwrap();
        assert_eq!(t.feature_names, strings(&["age", "sex", "ag"]));
        assert_eq!(t.features.row(0).to_vec(), vec![65.0, 0.0, 0.9]);
        assert!(t.features[[1, 2]].is_nan());
        assert_eq!(t.target.to_vec(), vec![1.0, 0.0, 1.0]);
        let s = t.stats();
        assert_eq!(
            (s.samples, s.features, s.missing_values, s.rows_with_missing),
            (3, 3, 1, 1)
        );
        assert_eq!(s.class_counts, vec![1, 2]);

        let mut x = t.features.clone();
        let imp = Imputer::fit(&t, &[0, 1], ImputeStrategy::Mean).unwrap();
        assert_eq!(imp.transform(&mut x).unwrap(), 1);
        assert_eq!(x[[1, 2]], 0.9, "only the training rows 0 and 1 count");
        let imp = Imputer::fit(&t, &[0, 1, 2], ImputeStrategy::Median).unwrap();
        assert_eq!(imp.fill, vec![62.0, 1.0, 0.5 * (0.9 + 1.5)]);
        assert!(matches!(
            Imputer::fit(&t, &[1], ImputeStrategy::Mean),
            Err(DatasetError::InvalidArgument { .. })
        ));
    }

    #[test]
    fn bad_rows_give_parse_errors_with_line_numbers() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.csv");
        for (text, line) in [
            ("a,b,c,l\n1,Male,2,1\n1,Male,x,1\n", 3),
            ("a,b,c,l\n1,Male,2,1\n1,Alien,2,1\n", 3),
            ("a,b,c,l\n1,Male,2\n", 2),
            ("a,b,c,l\n\n1,Male,2,7\n", 3),
        ] {
            std::fs::write(&p, text).unwrap();
            match load_table("t", &p, &csv_spec(true)) {
                Err(DatasetError::Parse { line: l, .. }) => assert_eq!(l, line, "{text}"),
                other => panic!("{text}: {other:?}"),
            }
        }
        let e = load_table("t", &dir.path().join("none.csv"), &csv_spec(true)).unwrap_err();
        assert!(matches!(e, DatasetError::MissingFile { .. }));
    }

    #[test]
    fn arff_and_whitespace() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.arff");
        std::fs::write(
            &p,
            "% comment\n@relation 'r'\n@attribute 'age' real\n% c\n@attribute 'cp' { 1, 4, 3}\n\
             @attribute 'chol' real\n@data\n63,1,233\n67,?,286\n",
        )
        .unwrap();
        let spec = spec_arff();
        let t = load_table("c", &p, &spec).unwrap();
        assert_eq!(
            t.columns[1],
            ColumnKind::Nominal {
                levels: strings(&["1", "4", "3"])
            }
        );
        assert_eq!(t.features[[0, 1]], 1.0, "numeric nominal levels keep their value");
        assert!(t.features[[1, 1]].is_nan());
        assert_eq!(t.target.to_vec(), vec![233.0, 286.0]);
        let imp = Imputer::fit(&t, &[0, 1], ImputeStrategy::Mean).unwrap();
        assert_eq!(imp.fill[1], 1.0, "nominal columns use the mode");

        let w = dir.path().join("w.txt");
        std::fs::write(&w, "-2.3 0.568  4.78 0.11\n-2.3  0.5 4 0.27\n\n").unwrap();
        let spec = TableSpec {
            format: TableFormat::Whitespace,
            ..spec
        };
        let t = load_table("y", &w, &spec).unwrap();
        assert_eq!(t.features.dim(), (2, 3));
        assert_eq!(t.target.to_vec(), vec![0.11, 0.27]);

        std::fs::write(&p, "@relation r\n@attribute s string\n@data\n").unwrap();
        assert!(matches!(
            load_table("c", &p, &spec_arff()),
            Err(DatasetError::UnsupportedFormat { .. })
        ));
    }

    fn spec_arff() -> TableSpec {
        TableSpec::new(TableFormat::Arff, TargetSpec::Regression)
    }

    #[test]
    fn zeros_can_be_marked_missing() {
        let mut t = TabularData {
            name: "z".into(),
            features: ndarray::array![[0.0, 0.0], [1.0, 0.0]],
            target: ndarray::array![0.0, 1.0],
            feature_names: strings(&["a", "b"]),
            columns: vec![ColumnKind::Numeric; 2],
            task: Task::Regression,
        };
        assert_eq!(t.mark_zeros_missing(&[1]).unwrap(), 2);
        assert_eq!(t.stats().missing_values, 2);
        assert!(t.mark_zeros_missing(&[2]).is_err());
    }
}
