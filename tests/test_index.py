"""The Annoy index: built on disk in the index stage, the same neighbours as in memory."""

from __future__ import annotations

import numpy as np
import pytest

from postprocess.errors import InputError
from postprocess.stages.index import INDEX_FILE, build_index, load_index, save_index


def neighbours(index, item: int, count: int) -> list[tuple[int, float]]:  # noqa: ANN001
    """The index's neighbour columns as (item, cosine) pairs, to compare two indexes' answers."""
    rows, cosines = index.neighbour_columns(item, count)
    return list(zip(rows.tolist(), cosines.tolist(), strict=True))


def unit_vectors(n: int, dim: int = 16, seed: int = 0) -> np.ndarray:
    vectors = np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_an_index_built_on_disk_answers_as_one_built_in_memory(tmp_path):
    vectors = unit_vectors(300)
    urls = [f"https://example.com/{i}/" for i in range(300)]
    memory = build_index(urls, vectors, trees=10)
    disk = build_index(urls, vectors, trees=10, path=tmp_path / INDEX_FILE)
    assert disk.on_disk == tmp_path / INDEX_FILE and (tmp_path / INDEX_FILE).is_file()
    assert not list(tmp_path.glob(".tmp-*"))  # renamed into place once complete
    for item in range(0, 300, 7):
        assert neighbours(disk, item, 10) == neighbours(memory, item, 10)
    before = (tmp_path / INDEX_FILE).stat().st_mtime_ns
    save_index(disk, tmp_path)  # the ids only: the index file is already where it belongs
    assert (tmp_path / INDEX_FILE).stat().st_mtime_ns == before
    loaded = load_index(tmp_path)
    assert loaded.urls == urls and neighbours(loaded, 3, 5) == neighbours(memory, 3, 5)


def test_an_in_memory_index_is_saved_whole(tmp_path):
    vectors = unit_vectors(50)
    index = build_index([str(i) for i in range(50)], vectors, trees=5)
    save_index(index, tmp_path)
    assert neighbours(load_index(tmp_path), 0, 5) == neighbours(index, 0, 5)
    with pytest.raises(InputError, match="run the index stage first"):
        load_index(tmp_path / "nothing")


def test_an_index_of_another_dimension_is_refused_before_use(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from postprocess.stages.index import IDS_FILE, check_matches

    index = build_index([str(i) for i in range(40)], unit_vectors(40, dim=16), trees=5)
    save_index(index, tmp_path)
    ids = pq.read_table(tmp_path / IDS_FILE)
    pq.write_table(ids.replace_schema_metadata({"dimension": "384"}), tmp_path / IDS_FILE)
    with pytest.raises(InputError, match="not an index of 384-dimension vectors.*run the index stage again"):
        load_index(tmp_path)
    fewer = pa.table({"id": list(range(30)), "url": [str(i) for i in range(30)]})
    pq.write_table(fewer.replace_schema_metadata({"dimension": "16"}), tmp_path / IDS_FILE)
    with pytest.raises(InputError, match="holds 40 pages but index-ids.parquet lists 30"):
        load_index(tmp_path)
    save_index(index, tmp_path)
    with pytest.raises(InputError, match="does not match vectors.parquet"):
        check_matches(load_index(tmp_path), unit_vectors(40, dim=8), tmp_path)


def test_the_neighbour_columns_are_annoys_answer_to_the_bit():
    """The ranking reads each source's neighbours as two columns: Annoy's items in its order with the
    cosine of each (1 − d²/2, in float64, as Python computes it a number at a time); the item itself
    left out, at most ``count`` (duplicate vectors put the item anywhere in Annoy's answer)."""
    vectors = unit_vectors(200)
    vectors[100:110] = vectors[100]  # ten pages of one vector: the item is not always first
    index = build_index([str(i) for i in range(200)], vectors, trees=5)
    for item in range(0, 200, 3):
        for count in (1, 10, 40):
            rows, cosines = index.neighbour_columns(item, count)
            ids, distances = index.annoy.get_nns_by_item(item, count + 1, include_distances=True)
            pairs = [(j, 1.0 - d * d / 2.0) for j, d in zip(ids, distances, strict=True) if j != item][:count]
            assert rows.dtype == np.int64 and cosines.dtype == np.float64
            assert rows.tolist() == [j for j, _ in pairs] and item not in rows.tolist()
            assert cosines.tolist() == [c for _, c in pairs]
