"""Per-sample gradients of the contrastive loss: ghost norms and clipped sums equal one-at-a-time autograd.

This is what makes clipping bound one private sample's influence (docs/privacy.md §3.4).
"""

import pytest
import torch
import torch.nn.functional as F

from pcevolve.encoders import ImageEncoder
from pcevolve.encoders.contrastive import MomentumCopy
from pcevolve.encoders.ghost_norms import GhostNorms
from pcevolve.encoders.per_sample import Projector, contrastive_loss_rows, per_sample_norms_and_clipped_sum

TEMPERATURE = 0.1


@pytest.fixture(scope="module")
def setup():
    torch.manual_seed(0)  # only for the test's random inputs; the code under test takes no global seed
    encoder = ImageEncoder.pretrained("efficientnet-lite0", trainable_blocks=2, input_size=32, proj_hidden_dim=32,
                                      feature_dim=16, seed=3)
    projector = Projector(encoder.top, encoder.head).double()
    key = MomentumCopy(projector, momentum=0.9)
    with torch.no_grad():  # make the key encoder differ from the query encoder, as during training
        for p in key.module.parameters():
            p.add_(0.01 * torch.randn_like(p))
    g = torch.Generator().manual_seed(1)
    images = torch.rand(12, 1, 28, 28, generator=g)
    acts = encoder.trunk_activations(images).double()
    views_a, views_b = acts[:6], acts[6:]
    negatives = F.normalize(torch.randn(40, 16, generator=g, dtype=torch.float64), dim=1)
    return projector, key, views_a, views_b, negatives


def _brute_force(projector, key, views_a, views_b, negatives):
    """G_i for each sample, computed one sample at a time with plain autograd."""
    params = [p for p in projector.parameters() if p.requires_grad]
    grads = []
    for i in range(len(views_a)):
        loss = contrastive_loss_rows(projector, key, views_a[i : i + 1], views_b[i : i + 1], negatives,
                                     temperature=TEMPERATURE).sum()
        grads.append([g.detach() for g in torch.autograd.grad(loss, params)])
    return grads


def _norm(grads):
    return torch.sqrt(sum(g.pow(2).sum() for g in grads))


def test_ghost_norms_and_clipped_sum_match_brute_force(setup):
    projector, key, views_a, views_b, negatives = setup
    expected = _brute_force(projector, key, views_a, views_b, negatives)
    ghost = GhostNorms(projector)
    norms, clipped_sum, _ = per_sample_norms_and_clipped_sum(projector, ghost, key, views_a, views_b, negatives,
                                                             temperature=TEMPERATURE)
    torch.testing.assert_close(norms, torch.stack([_norm(g) for g in expected]), rtol=1e-7, atol=1e-10)
    factors = torch.linspace(0.2, 1.0, len(views_a), dtype=torch.float64)
    summed = clipped_sum(factors)
    for k, part in enumerate(summed):
        reference = sum(factors[i] * expected[i][k] for i in range(len(expected)))
        torch.testing.assert_close(part, reference, rtol=1e-7, atol=1e-10)


def test_one_sample_gradient_ignores_its_batch_mates(setup):
    projector, key, views_a, views_b, negatives = setup
    ghost = GhostNorms(projector)
    one_hot = torch.zeros(len(views_a), dtype=torch.float64)
    one_hot[0] = 1.0
    norms, clipped_sum, _ = per_sample_norms_and_clipped_sum(projector, ghost, key, views_a, views_b, negatives,
                                                             temperature=TEMPERATURE)
    alone = clipped_sum(one_hot)
    other_a, other_b = views_a.clone(), views_b.clone()
    other_a[1:] = views_a[1:].flip(0) * 1.5  # replace every batch-mate of sample 0
    other_b[1:] = torch.rand_like(views_b[1:])
    norms2, clipped_sum2, _ = per_sample_norms_and_clipped_sum(projector, ghost, key, other_a, other_b, negatives,
                                                               temperature=TEMPERATURE)
    torch.testing.assert_close(norms2[0], norms[0], rtol=1e-10, atol=1e-12)
    for x, y in zip(alone, clipped_sum2(one_hot)):
        torch.testing.assert_close(x, y, rtol=1e-10, atol=1e-12)


def test_matches_opacus_per_sample_gradients(setup):
    """Opacus's GradSampleModule (per input row, then rows of one sample summed) agrees with the ghost norms."""
    from opacus import GradSampleModule

    projector, key, views_a, views_b, negatives = setup
    ghost = GhostNorms(projector)
    norms, _, _ = per_sample_norms_and_clipped_sum(projector, ghost, key, views_a, views_b, negatives,
                                                   temperature=TEMPERATURE)
    wrapped = GradSampleModule(projector, batch_first=True, loss_reduction="sum")
    wrapped.train()
    try:
        contrastive_loss_rows(wrapped, key, views_a, views_b, negatives, temperature=TEMPERATURE).sum().backward()
        batch = len(views_a)
        squared = sum((p.grad_sample[:batch] + p.grad_sample[batch:]).flatten(1).pow(2).sum(1)
                      for p in wrapped.parameters() if p.requires_grad)
    finally:
        wrapped.to_standard_module()
        for p in projector.parameters():
            p.grad = None
    torch.testing.assert_close(norms, squared.sqrt(), rtol=1e-6, atol=1e-9)


def test_views_are_summed_before_clipping(setup):
    """The unit is the sample: its norm is that of the summed views, not of each view separately."""
    projector, key, views_a, views_b, negatives = setup
    params = [p for p in projector.parameters() if p.requires_grad]
    losses = contrastive_loss_rows(projector, key, views_a[:1], views_b[:1], negatives, temperature=TEMPERATURE)
    per_view = [torch.autograd.grad(losses[j], params, retain_graph=True) for j in range(2)]
    summed = _norm([a + b for a, b in zip(*per_view)])
    ghost = GhostNorms(projector)
    norms, _, _ = per_sample_norms_and_clipped_sum(projector, ghost, key, views_a[:1], views_b[:1], negatives,
                                                   temperature=TEMPERATURE)
    torch.testing.assert_close(norms[0], summed)
    assert not torch.isclose(norms[0], _norm(per_view[0]))


def test_unsupported_trainable_layer_is_refused():
    model = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.LayerNorm(3))
    with pytest.raises(NotImplementedError, match="LayerNorm"):  # a skipped layer would under-count norms
        GhostNorms(model)
