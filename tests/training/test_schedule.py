from symgen.config.train import TrainConfig
from symgen.training.optim import lr_at


def test_constant_schedule_decays_over_the_last_steps():
    cfg = TrainConfig(steps=1000, lr=1.0, warmup_steps=10, decay_steps=100, min_lr_ratio=0.1)
    assert lr_at(0, cfg) == 0.1 and lr_at(10, cfg) == 1.0 and lr_at(900, cfg) == 1.0
    assert 0.1 < lr_at(950, cfg) < 1.0 and abs(lr_at(999, cfg) - 0.109) < 1e-9
    assert lr_at(999, TrainConfig(steps=1000, lr=1.0, warmup_steps=10)) == 1.0
    short = TrainConfig(steps=50, lr=1.0, warmup_steps=10, decay_steps=4000, min_lr_ratio=0.0)
    assert lr_at(10, short) == 1.0 and lr_at(30, short) == 0.5  # decays over all steps after warm-up
