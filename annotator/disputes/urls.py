"""URLs of the disputes pages, included under /p/<slug>/ by annotator/urls.py."""

from django.urls import path

from annotator.disputes import agreement_views, recheck_views
from annotator.disputes import views as disputes

urlpatterns = [
    path("disputes/", disputes.dispute_list, name="dispute_list"),
    path("disputes/queue/", disputes.dispute_queue, name="dispute_queue"),
    path("disputes/<id:dispute_id>/", disputes.dispute_detail, name="dispute_detail"),
    path("disputes/<id:dispute_id>/reason/", disputes.dispute_reason, name="dispute_reason"),
    path("disputes/<id:dispute_id>/revision/", disputes.dispute_revision, name="dispute_revision"),
    path("disputes/<id:dispute_id>/review/", disputes.dispute_review, name="dispute_review"),
    path("disputes/<id:dispute_id>/hand-over/", disputes.dispute_hand_over, name="dispute_hand_over"),
    path("disputes/pairs/<id:candidate_id>/timeline/", disputes.pair_history, name="pair_timeline"),
    path("disputes/recheck/", recheck_views.final_recheck_list, name="final_recheck_list"),
    path("disputes/pairs/<id:candidate_id>/recheck/", recheck_views.final_recheck, name="final_recheck"),
    path("disputes/agreement/", agreement_views.agreement_index, name="agreement_index"),
    path("disputes/agreement/<id:set_id>/", agreement_views.agreement_detail, name="agreement_detail"),
]
