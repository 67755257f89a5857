"""The data home, below every application's loaders and the fetchers.

* :mod:`.home` -- where the data sets live (:func:`get_data_home`) and the folder of
  one data set;
* :mod:`.download` -- downloading one file: a temporary name, sha256 checks, nothing
  kept on failure;
* :mod:`.sources` -- where each data set comes from (origins, published checksums)
  and making its files present.

The loaders (``structured_svm.datasets``, ``matching.qaplib``, ``traffic.tntp``)
import from here; :mod:`frankwolfe.applications.fetch` imports the loaders and this
package, never the other way.
"""

from .home import get_data_home

__all__ = ["get_data_home"]
